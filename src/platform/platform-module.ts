// The shape every subsystem of the management platform has (docs/architecture.md, "Modules and their lifecycle"): it
// declares its kinds, its routes and its background tasks, and has start(context) and close(). startModules() runs
// the lifecycle: every module's close goes onto one AsyncDisposableStack before it starts, so a start that fails half
// way is undone by the same code that shuts a running platform down.

import type { FastifyInstance } from "fastify";
import type { HealthCheck } from "../http/health.ts";
import type { PassthroughRoute } from "../http/passthrough.ts";
import type { Registry } from "../registry/registry.ts";
import type { LeaderTask } from "./leader.ts";
import type { ManagementResourceParts } from "./management-resources.ts";

/** What a module is started with: the registry, finished (every module's kinds are registered). */
export interface ModuleContext {
  registry: Registry;
}

/** A task the leader replica runs; made anew each time leadership begins (src/platform/leader.ts). */
export type TaskMaker = () => LeaderTask;

/** What a module serves over HTTP besides its kinds; read once every module has started. */
export interface ModuleRoutes {
  plugins?: ((app: FastifyInstance) => void | Promise<void>)[];
  passthrough?: PassthroughRoute[];
  /** Paths served without credentials. */
  publicPaths?: string[];
  healthChecks?: Record<string, HealthCheck>;
}

/** What every module declares, and its close (the store module has these and opens before the registry exists). */
export interface ModuleDeclarations {
  /** For logs, errors and the test that fails the start at every module in turn. */
  readonly name: string;
  /** Its parts of the platform's resource list (management-resources.ts), registered before any module starts. */
  readonly kinds?: Partial<ManagementResourceParts>;
  routes?(): ModuleRoutes;
  /** Background tasks for the leader replica; read once every module has started. */
  tasks?(): TaskMaker[];
  /** Called when the API server stops accepting, before it waits for open connections (long-lived tunnels end). */
  drain?(): Promise<void>;
  /** Closes what start() opened; safe after a start that failed or never ran. */
  close(): Promise<void>;
}

export interface PlatformModule extends ModuleDeclarations {
  /** Opens what it needs. May fail half way: close() then closes what was opened. */
  start(context: ModuleContext): Promise<void>;
}

export interface StartModulesOptions {
  /** TEST-ONLY FAULT SEAM: called before each module starts; a throw fails the start there. */
  beforeStart?: (name: string) => void | Promise<void>;
}

/**
 * Starts the modules in order. Every module's close is on `stack` before the first one starts (a module may hold
 * something from its construction, the audit log's worker), so closing runs in reverse order over all of them, also
 * when a start failed half way.
 */
export async function startModules(
  modules: readonly PlatformModule[],
  context: ModuleContext,
  stack: AsyncDisposableStack,
  options: StartModulesOptions = {},
): Promise<void> {
  for (const module of modules) stack.defer(() => module.close());
  for (const module of modules) {
    await options.beforeStart?.(module.name);
    await module.start(context);
  }
}

/** Every module's kinds, in the list's order of parts: later modules cannot replace an earlier one's part. */
export function declaredKinds(modules: readonly ModuleDeclarations[]): ManagementResourceParts {
  const parts: Partial<ManagementResourceParts> = {};
  for (const module of modules) {
    for (const [key, part] of Object.entries(module.kinds ?? {})) {
      if (key in parts) throw new Error(`module ${module.name} declares ${key}, declared already`);
      Object.assign(parts, { [key]: part });
    }
  }
  const missing = REQUIRED_PARTS.filter((key) => parts[key] === undefined);
  if (missing.length > 0) throw new Error(`no module declares ${missing.join(", ")}`);
  return parts as ManagementResourceParts;
}

const REQUIRED_PARTS: (keyof ManagementResourceParts)[] = [
  "auth",
  "projects",
  "clusters",
  "encryptionKeyRotations",
  "subjects",
  "audit",
];

/** Every module's routes, merged. */
export function moduleRoutes(modules: readonly ModuleDeclarations[]): Required<ModuleRoutes> {
  const all = modules.map((module) => module.routes?.() ?? {});
  return {
    plugins: all.flatMap((routes) => routes.plugins ?? []),
    passthrough: all.flatMap((routes) => routes.passthrough ?? []),
    publicPaths: all.flatMap((routes) => routes.publicPaths ?? []),
    healthChecks: Object.assign({}, ...all.map((routes) => routes.healthChecks ?? {})),
  };
}
