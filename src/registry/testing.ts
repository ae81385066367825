// Test support: a registry over an in-memory SQLite store, and request contexts. Used by registry and resource
// tests; the real server is exercised over HTTPS in test/.

import { isStatusError, type StatusError } from "../apimachinery/errors.ts";
import { openEtcdStore } from "../storage/etcd/etcd-store.ts";
import { testEtcdFromEnv } from "../storage/etcd/testing-etcd-cluster.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { Registry } from "./registry.ts";
import type { GenericStore } from "./store.ts";
import type { RequestContext, ResourceDefinition } from "./types.ts";

export interface TestRegistry {
  registry: Registry;
  store(definition: ResourceDefinition): GenericStore;
  close(): Promise<void>;
}

export interface TestRegistryOptions {
  /** Puts a layer between the registry and the store (e.g. one that injects concurrent writes); closing closes the store. */
  wrap?(storage: KeyValueStore): KeyValueStore;
}

export async function openTestRegistry(
  definitions: ResourceDefinition[],
  options: TestRegistryOptions = {},
): Promise<TestRegistry> {
  // VCP_TEST_STORE=etcd: the same tests on a real etcd (see testEtcdFromEnv).
  const etcd = await testEtcdFromEnv();
  // Behaviour, not etcd's answer time, is under test: a loaded machine may take longer than production's 5 s.
  const storage = etcd
    ? await openEtcdStore({ ...etcd, requestTimeoutMs: 90_000 })
    : await openSqliteStore({ path: ":memory:" });
  const registry = new Registry(options.wrap ? options.wrap(storage) : storage);
  for (const definition of definitions) registry.register(definition);
  return {
    registry,
    store(definition) {
      const store = registry.genericStore(definition.group, definition.plural);
      if (!store) throw new Error(`${definition.plural} is not a stored resource`);
      return store;
    },
    close: () => storage.close(),
  };
}

/** A fresh context per call, so warnings and "now" belong to one request. */
export function testContext(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    user: { name: "tester", groups: ["system:masters"] },
    authorizer: { authorize: async () => ({ allowed: true }) },
    warnings: [],
    userAgent: "registry-test/1.0",
    now: new Date(),
    ...overrides,
  };
}

/** Awaits a promise expected to fail with a StatusError and returns it (fails the test otherwise). */
export async function statusErrorOf(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (error) {
    if (isStatusError(error)) return error;
    throw error;
  }
  throw new Error("expected a StatusError, but the call succeeded");
}

/** A cluster-scoped kind with a free-form spec and no strategy hooks: the generic store's rules alone. */
export const thingDefinition: ResourceDefinition = {
  group: "test.platform.sh",
  version: "v1",
  kind: "Thing",
  plural: "things",
  singular: "thing",
  namespaced: false,
  description: "A test kind.",
  schema: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
  strategy: {},
};
