import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { ResourceStore } from "../../../registry/types.ts";
import { CONFIG_NAME, configDefinition } from "./config.ts";
import { withConfigUpsert } from "./config-store.ts";

const body = (raw: string, resourceVersion?: string) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "Config",
  metadata: { name: CONFIG_NAME, ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { raw },
});

describe("withConfigUpsert()", () => {
  let env: TestRegistry;
  let store: ResourceStore;

  before(async () => {
    const definition = configDefinition();
    env = await openTestRegistry([definition]);
    [store] = withConfigUpsert([env.store(definition)]);
  });
  after(() => env.close());

  it("withConfigUpsert() creates the config on the first POST and replaces it on the next", async () => {
    const created = await store.create(testContext(), undefined, body("platformHost: a.example.com\n"), {});
    assert.equal((created.status as { platformHost: string }).platformHost, "a.example.com");
    const replaced = await store.create(testContext(), undefined, body("platformHost: b.example.com\n"), {});
    assert.equal((replaced.status as { platformHost: string }).platformHost, "b.example.com");
    assert.equal(replaced.metadata.uid, created.metadata.uid);
  });

  it("withConfigUpsert() treats a sent resourceVersion as a precondition", async () => {
    const error = await statusErrorOf(store.create(testContext(), undefined, body("", "1"), {}));
    assert.equal(error.code, 409);
  });

  it("withConfigUpsert() answers a write only once the written config is in force", async () => {
    const definition = configDefinition();
    const asked: number[] = [];
    let release: () => void = () => {};
    const [waiting] = withConfigUpsert([env.store(definition)], {
      waitFor: (revision) => {
        asked.push(revision);
        return new Promise((resolve) => {
          release = resolve;
        });
      },
    });
    let answered = false;
    const write = waiting
      .patch(testContext(), { name: CONFIG_NAME }, "merge", { spec: { raw: "platformHost: c.example.com\n" } }, {})
      .then((result) => {
        answered = true;
        return result;
      });
    while (asked.length === 0) await new Promise((r) => setImmediate(r));
    assert.equal(answered, false);
    release();
    const result = await write;
    assert.equal(asked[0], Number(result.object.metadata.resourceVersion));
  });

  it("withConfigUpsert() still refuses other names", async () => {
    const error = await statusErrorOf(
      store.create(testContext(), undefined, { ...body(""), metadata: { name: "other" } }, {}),
    );
    assert.equal(error.code, 422);
  });
});
