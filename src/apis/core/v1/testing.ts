// Test support for core/v1 and rbac strategies: a registry with the given kinds, and the field errors of a 422 as
// the `field: message` lines kubectl prints.

import type { KubeObject } from "../../../apimachinery/types.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";

export interface KindHarness {
  env: TestRegistry;
  create(object: KubeObject): Promise<KubeObject>;
  update(object: KubeObject): Promise<KubeObject>;
  /** The `field: message` lines of the 422 the write fails with (fails the test if it does not). */
  invalid(write: Promise<unknown>): Promise<string[]>;
  close(): Promise<void>;
}

export async function kindHarness(definition: ResourceDefinition): Promise<KindHarness> {
  const env = await openTestRegistry([definition]);
  const store = env.store(definition);
  return {
    env,
    create: (object) => store.create(testContext(), object.metadata.namespace, object, {}),
    update: (object) =>
      store.update(
        testContext(),
        { namespace: object.metadata.namespace, name: object.metadata.name ?? "" },
        object,
        {},
      ),
    async invalid(write) {
      const error = await statusErrorOf(write);
      if (error.code !== 422) throw new Error(`expected 422, got ${error.code}: ${error.message}`);
      return (error.status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
    },
    close: () => env.close(),
  };
}
