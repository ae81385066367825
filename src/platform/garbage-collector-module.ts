// The garbage collector module: on the leader, deletes the objects whose owners are gone
// (src/registry/garbage-collector.ts), over every kind of the finished registry.

import type { Logger } from "pino";
import { GarbageCollector } from "../registry/garbage-collector.ts";
import type { Registry } from "../registry/registry.ts";
import type { ModuleContext, PlatformModule, TaskMaker } from "./platform-module.ts";

export class GarbageCollectorModule implements PlatformModule {
  readonly name = "garbage-collector";
  private readonly logger?: Logger;
  private registry?: Registry;

  constructor(logger?: Logger) {
    this.logger = logger;
  }

  async start({ registry }: ModuleContext): Promise<void> {
    this.registry = registry;
  }

  tasks(): TaskMaker[] {
    const { registry, logger } = this;
    if (!registry) return [];
    return [
      () => {
        const collector = new GarbageCollector({
          registry,
          onError: (error, key) => logger?.warn({ key, err: String(error) }, "garbage collection failed"),
        });
        return { name: "garbage collector", start: () => collector.start(), stop: () => collector.stop() };
      },
    ];
  }

  async close(): Promise<void> {}
}
