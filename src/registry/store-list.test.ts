// LIST's resourceVersion against its items when a write races the read: the revision a list reports is the one its
// items are as of, so a watch from it sees every later write (kubectl's wait for a deletion depends on it).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import type { KeyValueStore } from "../storage/types.ts";
import type { GenericStore } from "./store.ts";
import { openTestRegistry, type TestRegistry, testContext } from "./testing.ts";
import type { ApiWatchEvent, ResourceDefinition } from "./types.ts";

const thing: ResourceDefinition = {
  group: "test.platform.sh",
  version: "v1",
  namespaced: false,
  description: "A test kind.",
  kind: "Thing",
  plural: "things",
  singular: "thing",
  schema: { spec: { type: "object" } },
  strategy: {},
};

/**
 * A store as seen across a network: a read takes its snapshot, then the armed write commits before the caller hears
 * the answer, and a revision asked for while the read was under way already counts that write.
 */
class RacingWrites {
  private armed?: () => Promise<unknown>;
  private readonly reads = new Set<Promise<unknown>>();

  /** The next get() or list() has `write` land between its snapshot and its answer. */
  arm(write: () => Promise<unknown>): void {
    this.armed = write;
  }

  wrap(storage: KeyValueStore): KeyValueStore {
    const read = <T>(snapshot: () => Promise<T>): Promise<T> => {
      const answered = (async () => {
        const answer = await snapshot();
        const write = this.armed;
        this.armed = undefined;
        if (write) await write();
        return answer;
      })();
      this.reads.add(answered);
      void answered.finally(() => this.reads.delete(answered)).catch(() => {});
      return answered;
    };
    return new Proxy(storage, {
      get: (target, property) => {
        if (property === "get") return (key: string) => read(() => target.get(key));
        if (property === "list")
          return (options: Parameters<KeyValueStore["list"]>[0]) => read(() => target.list(options));
        if (property === "currentRevision") {
          return async () => {
            await Promise.allSettled([...this.reads]);
            return target.currentRevision();
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }
}

describe("store list and racing writes", () => {
  const racing = new RacingWrites();
  let test: TestRegistry;
  let things: GenericStore;
  let storage: KeyValueStore;

  before(async () => {
    test = await openTestRegistry([thing], {
      wrap: (inner) => {
        storage = inner;
        return racing.wrap(inner);
      },
    });
    things = test.store(thing);
  });
  after(() => test.close());

  it("list() by metadata.name reports the revision its item is as of: a watch from it sees a delete that raced the read", async () => {
    await things.create(
      testContext(),
      undefined,
      { apiVersion: "test.platform.sh/v1", kind: "Thing", metadata: { name: "raced" }, spec: {} },
      {},
    );
    racing.arm(() => storage.delete(things.key({ name: "raced" })));
    const list = await things.list(testContext(), { fieldSelector: "metadata.name=raced" });
    assert.equal((await things.list(testContext(), {})).items.length, 0, "the racing delete landed");
    if (list.items.length === 0) return; // read after the delete: nothing to wait for, nothing missed

    // Watch everything from the list's revision; a write after the delete marks the end of what must have arrived.
    const events: ApiWatchEvent[] = [];
    let sentinelSeen: () => void = () => {};
    const sentinel = new Promise<void>((resolve) => {
      sentinelSeen = resolve;
    });
    const handle = await things.watch(
      testContext(),
      { resourceVersion: list.metadata.resourceVersion },
      {
        send(event) {
          events.push(event);
          if ((event.object as KubeObject).metadata.name === "sentinel") sentinelSeen();
          return true;
        },
        end() {},
      },
    );
    await things.create(
      testContext(),
      undefined,
      { apiVersion: "test.platform.sh/v1", kind: "Thing", metadata: { name: "sentinel" }, spec: {} },
      {},
    );
    await sentinel;
    handle.close();
    const seen = events.map((event) => `${event.type} ${(event.object as KubeObject).metadata.name}`);
    assert.deepEqual(seen, ["DELETED raced", "ADDED sentinel"]);
  });
});
