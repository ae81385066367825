// Conformance property: a random sequence of operations against the store matches a simple in-memory model —
// every result and error, the final state, lists at past revisions, and the watch stream (live and replayed).

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { compareUtf8 } from "../utils/utf8-compare.ts";
import { type OpenStore, WatchRecording } from "./conformance-support.ts";
import { type KeyValueStore, StorageError, type StoredRecord, type WatchEvent } from "./types.ts";

type Command =
  | { op: "create"; key: string; value: string }
  | { op: "update"; key: string; value: string; stale: boolean }
  | { op: "delete"; key: string; expect: "none" | "current" | "stale" }
  | { op: "compact"; keep: number };

type Outcome = StoredRecord | { error: string; current?: StoredRecord };

const KEYS = ["/m/a", "/m/ab", "/m/b", "/ma/x", "/n/é", "/n/\u{1F600}"];
const PREFIXES = ["/", "/m/", "/m/a", "/ma", "/n/"];

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("create" as const),
      key: fc.constantFrom(...KEYS),
      value: fc.string({ maxLength: 8 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("update" as const),
      key: fc.constantFrom(...KEYS),
      value: fc.string({ maxLength: 8 }),
      stale: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("delete" as const),
      key: fc.constantFrom(...KEYS),
      expect: fc.constantFrom("none" as const, "current" as const, "stale" as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("compact" as const), keep: fc.nat(6) }) },
);

/** The model: live records, the state after every revision, and the event log. */
class Model {
  revision = 0;
  compacted = 0;
  readonly live = new Map<string, StoredRecord>();
  readonly states = new Map<number, StoredRecord[]>([[0, []]]);
  readonly events: WatchEvent[] = [];

  /** The expected revision a command passes, from the state before it runs. */
  expectation(command: Command): number | undefined {
    if (command.op === "create" || command.op === "compact") return undefined;
    const stale = command.op === "update" ? command.stale : command.expect === "stale";
    if (command.op === "delete" && command.expect === "none") return undefined;
    const current = this.live.get(command.key)?.revision ?? 1;
    return stale ? current - 1 : current;
  }

  apply(command: Command, expected: number | undefined): Outcome | number {
    if (command.op === "compact") {
      this.compacted = Math.max(this.compacted, this.revision - command.keep);
      return this.compacted;
    }
    const current = this.live.get(command.key);
    const revision = this.revision + 1;
    if (command.op === "create") {
      if (current) return { error: "KeyExists", current };
      const record = { key: command.key, value: command.value, revision, createRevision: revision };
      return this.commit(record, { type: "create", record });
    }
    if (!current) return { error: "NotFound" };
    if (expected !== undefined && expected !== current.revision) return { error: "Conflict", current };
    if (command.op === "update") {
      const record = { ...current, value: command.value, revision };
      return this.commit(record, { type: "update", record, previous: current });
    }
    const record = { ...current, revision };
    return this.commit(record, { type: "delete", record, previous: current });
  }

  stateAt(revision: number): StoredRecord[] {
    for (let r = revision; r >= 0; r--) {
      const state = this.states.get(r);
      if (state) return state;
    }
    return [];
  }

  private commit(record: StoredRecord, event: WatchEvent): StoredRecord {
    this.revision = record.revision;
    if (event.type === "delete") this.live.delete(record.key);
    else this.live.set(record.key, record);
    this.states.set(
      this.revision,
      [...this.live.values()].sort((a, b) => compareUtf8(a.key, b.key)),
    );
    this.events.push(event);
    return record;
  }
}

async function run(store: KeyValueStore, command: Command, expected: number | undefined): Promise<Outcome | number> {
  try {
    switch (command.op) {
      case "create":
        return await store.create(command.key, command.value);
      case "update":
        return await store.update(command.key, command.value, expected ?? 0);
      case "delete":
        return await store.delete(command.key, expected);
      case "compact":
        return await store.compact(command.keep);
    }
  } catch (error) {
    if (!(error instanceof StorageError)) throw error;
    return error.current ? { error: error.storageCode, current: error.current } : { error: error.storageCode };
  }
}

async function checkAgainstModel(open: OpenStore, commands: Command[]): Promise<void> {
  const store = await open();
  try {
    const model = new Model();
    const live = new WatchRecording(store, { prefix: "/", afterRevision: 0 });
    for (const [index, command] of commands.entries()) {
      const expectation = model.expectation(command);
      const expected = model.apply(command, expectation);
      assert.deepEqual(
        await run(store, command, expectation),
        expected,
        `command ${index}: ${JSON.stringify(command)}`,
      );
    }
    assert.equal(await store.currentRevision(), model.revision);
    assert.equal(await store.compactedRevision(), model.compacted);
    for (const prefix of PREFIXES) {
      const records = model.stateAt(model.revision).filter((r) => r.key.startsWith(prefix));
      assert.deepEqual(await store.list({ prefix }), { records, revision: model.revision, remaining: 0 });
      assert.equal(await store.count(prefix), records.length);
    }
    for (let revision = 1; revision <= model.revision; revision++) {
      const listing = store.list({ prefix: "/", revision });
      if (revision < model.compacted) {
        await assert.rejects(listing, (e: unknown) => e instanceof StorageError && e.storageCode === "Compacted");
      } else {
        assert.deepEqual((await listing).records, model.stateAt(revision), `list at ${revision}`);
      }
    }
    if (model.revision > 0) {
      await live.untilRevision(model.revision);
      assert.deepEqual(live.events, model.events);
      const from = Math.max(model.compacted, 1);
      const replay = new WatchRecording(store, { prefix: "/m/", afterRevision: from });
      const expected = model.events.filter((e) => e.record.revision > from && e.record.key.startsWith("/m/"));
      const sentinel = await store.create("/m/zz-sentinel", "end");
      await replay.untilRevision(sentinel.revision);
      assert.deepEqual(replay.events, [...expected, { type: "create", record: sentinel }]);
    }
  } finally {
    await store.close();
  }
}

export function modelConformance(name: string, open: OpenStore): void {
  test(`${name} matches an in-memory model over random operation sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { maxLength: 40 }), (commands) => checkAgainstModel(open, commands)),
      { numRuns: 40 },
    );
  });
}
