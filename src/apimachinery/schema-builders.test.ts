import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  array,
  boolean,
  describedAs,
  integer,
  intOrString,
  type KindOf,
  mapOf,
  object,
  openObject,
  openObjectOf,
  type Static,
  string,
  stringList,
} from "./schema-builders.ts";
import type { KubeObject } from "./types.ts";

/** Compiles only when A and B are the same type (npm run typecheck holds these). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const holds = <T extends true>(): T => true as T;

const rule = object(
  {
    verbs: stringList("Verbs."),
    level: string("Level.", { enum: ["None", "Metadata"] }),
    count: integer("Count."),
    on: boolean("On."),
    port: intOrString("Port."),
    labels: mapOf(string("A label."), "Labels."),
    extra: openObject("Anything."),
  },
  "A rule.",
  ["verbs"],
);

describe("schema builders", () => {
  it("object() derives required and optional properties, enums as unions", () => {
    holds<
      Equal<
        Static<typeof rule>,
        {
          verbs: string[];
          level?: "None" | "Metadata";
          count?: number;
          on?: boolean;
          port?: number | string;
          labels?: Record<string, string>;
          extra?: Record<string, unknown>;
        }
      >
    >();
    assert.deepEqual(rule.required, ["verbs"]);
    assert.deepEqual(Object.keys(rule.properties as object), [
      "verbs",
      "level",
      "count",
      "on",
      "port",
      "labels",
      "extra",
    ]);
    assert.deepEqual((rule.properties as Record<string, unknown>).level, {
      type: "string",
      description: "Level.",
      enum: ["None", "Metadata"],
    });
  });

  it("object() without required properties writes no required list (an empty one is invalid OpenAPI v2)", () => {
    const schema = object({ a: string("A.") }, "An object.");
    assert.equal("required" in schema, false);
  });

  it("KindOf() is the envelope plus each top-level field, optional", () => {
    const kind = { spec: rule, status: openObject("Status.") };
    holds<Equal<KindOf<typeof kind>["spec"], Static<typeof rule> | undefined>>();
    const object: KindOf<typeof kind> = { apiVersion: "v1", kind: "Rule", metadata: { name: "a" } };
    const envelope: KubeObject = object;
    assert.equal(envelope.metadata.name, "a");
  });

  it("openObjectOf() types the named fields and keeps every other one", () => {
    const event = openObjectOf({ verb: string("Verb.") }, "An event.");
    holds<Equal<Static<typeof event>, { verb?: string } & Record<string, unknown>>>();
    assert.equal(event["x-kubernetes-preserve-unknown-fields"], true);
  });

  it("describedAs() and array() keep the type of what they wrap", () => {
    const list = describedAs(array(rule, "Rules."), "The rules of this object.");
    holds<Equal<Static<typeof list>, Static<typeof rule>[]>>();
    assert.equal(list.description, "The rules of this object.");
    assert.equal(list.items, rule);
  });
});
