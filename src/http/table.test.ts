import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { humanDuration, toTable } from "./table.ts";
import { usersDefinition } from "./testing-definitions.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read into untyped JSON documents.
type Json = any;

const NOW = new Date("2026-01-20T12:00:00Z");
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function user(name: string, ageMs: number | undefined, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "management.platform.sh/v1",
    kind: "User",
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: "7",
      labels: { team: "a" },
      ...(ageMs === undefined ? {} : { creationTimestamp: new Date(NOW.getTime() - ageMs).toISOString() }),
    },
    spec,
  };
}

describe("table", () => {
  it("humanDuration() matches apimachinery's HumanDuration", () => {
    const cases: [number, string][] = [
      [-3 * SECOND, "<invalid>"],
      [-1.5 * SECOND, "0s"],
      [0, "0s"],
      [45 * SECOND, "45s"],
      [119 * SECOND, "119s"],
      [2 * MINUTE, "2m"],
      [5 * MINUTE + 3 * SECOND, "5m3s"],
      [10 * MINUTE + 30 * SECOND, "10m"],
      [179 * MINUTE, "179m"],
      [3 * HOUR, "3h"],
      [5 * HOUR + 3 * MINUTE, "5h3m"],
      [8 * HOUR + 59 * MINUTE, "8h"],
      [47 * HOUR, "47h"],
      [2 * DAY, "2d"],
      [3 * DAY + 4 * HOUR, "3d4h"],
      [8 * DAY + 5 * HOUR, "8d"],
      [10 * DAY, "10d"],
      [729 * DAY, "729d"],
      [730 * DAY, "2y"],
      [2 * 365 * DAY + 30 * DAY, "2y30d"],
      [9 * 365 * DAY, "9y"],
    ];
    for (const [ms, expected] of cases) assert.equal(humanDuration(ms), expected, `${ms} ms`);
  });

  it("toTable() builds Name, the definition's columns and Age", () => {
    const table = toTable(usersDefinition, [user("alice", 10 * DAY, { email: "a@example.com" })], { now: NOW }) as Json;
    assert.equal(table.kind, "Table");
    assert.equal(table.apiVersion, "meta.k8s.io/v1");
    assert.deepEqual(
      table.columnDefinitions.map((c: Json) => [c.name, c.type, c.format, c.priority]),
      [
        ["Name", "string", "name", 0],
        ["Email", "string", "", 0],
        ["Groups", "string", "", 1],
        ["Age", "string", "", 0],
      ],
    );
    assert.match(table.columnDefinitions[0].description, /^Name must be unique within a namespace/);
    assert.match(table.columnDefinitions[3].description, /^CreationTimestamp is a timestamp/);
    assert.deepEqual(table.rows[0].cells, ["alice", "a@example.com", "", "10d"]);
  });

  it("toTable() attaches PartialObjectMetadata rows by default", () => {
    const alice = user("alice", 5 * HOUR + 3 * MINUTE);
    const table = toTable(usersDefinition, [alice], { now: NOW }) as Json;
    assert.deepEqual(table.rows[0].object, {
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: alice.metadata,
    });
    assert.equal(table.rows[0].cells.at(-1), "5h3m");
  });

  it("toTable() carries the whole object for includeObject=Object and none for None", () => {
    const alice = user("alice", 45 * SECOND);
    const full = toTable(usersDefinition, [alice], { includeObject: "Object", now: NOW }) as Json;
    assert.deepEqual(full.rows[0].object, alice);
    const none = toTable(usersDefinition, [alice], { includeObject: "None", now: NOW }) as Json;
    assert.equal("object" in none.rows[0], false);
    assert.deepEqual(none.rows[0].cells, ["alice", "", "", "45s"]);
  });

  it("toTable() copies list metadata and leaves it empty without", () => {
    const table = toTable(usersDefinition, [], {
      listMeta: { resourceVersion: "42", continue: "tok", remainingItemCount: 3 },
    }) as Json;
    assert.deepEqual(table.metadata, { resourceVersion: "42", continue: "tok", remainingItemCount: 3 });
    assert.deepEqual(table.rows, []);
    assert.deepEqual((toTable(usersDefinition, [], {}) as Json).metadata, {});
  });

  it("toTable() renders missing creation timestamps as <unknown> and joins arrays", () => {
    const table = toTable(usersDefinition, [user("bob", undefined, { groups: ["a", "b"] })], { now: NOW }) as Json;
    assert.deepEqual(table.rows[0].cells, ["bob", "", "a,b", "<unknown>"]);
    const empty = toTable(usersDefinition, [user("carol", 1, { groups: [] })], { now: NOW }) as Json;
    assert.equal(empty.rows[0].cells[2], "<none>");
  });

  it("toTable() keeps typed cells, renders date columns as ages and omits Age when noAgeColumn", () => {
    const definition: ResourceDefinition = {
      ...usersDefinition,
      noAgeColumn: true,
      columns: [
        { name: "Count", type: "integer", description: "n", cell: (o) => (o.spec as Json)?.count },
        { name: "Ready", type: "boolean", description: "r", cell: (o) => (o.spec as Json)?.ready },
        { name: "Last Seen", type: "date", description: "d", cell: (o) => (o.spec as Json)?.lastSeen },
        { name: "Owner", type: "string", description: "o", cell: (o) => (o.spec as Json)?.owner },
        {
          name: "Broken",
          type: "string",
          description: "b",
          cell: () => {
            throw new Error("boom");
          },
        },
      ],
    };
    const spec = {
      count: 3,
      ready: false,
      lastSeen: new Date(NOW.getTime() - 3 * DAY).toISOString(),
      owner: { user: "x" },
    };
    const table = toTable(definition, [user("dave", DAY, spec), user("erin", DAY)], { now: NOW }) as Json;
    assert.deepEqual(
      table.columnDefinitions.map((c: Json) => c.name),
      ["Name", "Count", "Ready", "Last Seen", "Owner", "Broken"],
    );
    assert.deepEqual(table.rows[0].cells, ["dave", 3, false, "3d", '{"user":"x"}', ""]);
    assert.deepEqual(table.rows[1].cells, ["erin", "", "", "<unknown>", "", ""]);
  });
});
