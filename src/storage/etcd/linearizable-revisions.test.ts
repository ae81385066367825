import assert from "node:assert/strict";
import { test } from "node:test";
import type { EtcdHeader } from "./etcd-client.ts";
import { LinearizableRevisions } from "./linearizable-revisions.ts";

interface Answer {
  header?: EtcdHeader;
}

/** A call whose answer the test gives (or refuses) when it likes. */
function pending() {
  let answer!: (revision: number) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<Answer>((resolve, reject) => {
    answer = (revision) => resolve({ header: { revision: String(revision) } });
    fail = reject;
  });
  return { promise, answer, fail };
}

/** Reads made through the options, each answered by the test. */
function reads() {
  const made: ReturnType<typeof pending>[] = [];
  return {
    made,
    read: () => {
      const call = pending();
      made.push(call);
      return call.promise;
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("LinearizableRevisions.next() reads etcd's revision when no write is on its way, one read for all who asked", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read });
  const first = revisions.next();
  const second = revisions.next();
  await turn();
  assert.equal(made.length, 1, "callers of the same turn share one read");
  made[0].answer(7);
  assert.deepEqual(await Promise.all([first, second]), [7, 7]);
});

test("LinearizableRevisions.next() takes the revision of a write made after it, and makes no read", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read, patienceMs: 60_000 });
  const before = pending();
  const writtenBefore = revisions.track(true, () => before.promise);
  const asked = revisions.next();
  const after = pending();
  const writtenAfter = revisions.track(true, () => after.promise);
  await turn();
  assert.equal(made.length, 0, "writes are on their way: no read");
  let answered: number | undefined;
  asked.then((revision) => {
    answered = revision;
  });
  before.answer(10);
  await writtenBefore;
  await turn();
  assert.equal(answered, undefined, "a write made before the caller asked does not answer it");
  after.answer(12);
  assert.deepEqual(await writtenAfter, { header: { revision: "12" } });
  assert.equal(await asked, 12);
  assert.equal(made.length, 0);
});

test("LinearizableRevisions.next() reads once the writes end without answering it", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read, patienceMs: 60_000 });
  const write = pending();
  const written = revisions.track(true, () => write.promise);
  const asked = revisions.next();
  await turn();
  assert.equal(made.length, 0);
  write.fail(new Error("lost"));
  await assert.rejects(written, /lost/);
  await turn();
  assert.equal(made.length, 1, "the last write ended: a read of its own");
  made[0].answer(20);
  assert.equal(await asked, 20);
});

test("LinearizableRevisions.next() reads anyway when writes take longer than its patience", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read, patienceMs: 5 });
  const write = pending();
  const written = revisions.track(true, () => write.promise);
  const asked = revisions.next();
  while (made.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  made[0].answer(30);
  assert.equal(await asked, 30);
  write.answer(31);
  await written;
});

test("LinearizableRevisions.next() rejects with the read's error those the read was for, and reads again for later ones", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read });
  const early = revisions.next();
  await turn();
  const late = revisions.next();
  made[0].fail(new Error("etcd is unavailable"));
  await assert.rejects(early, /etcd is unavailable/);
  await turn();
  assert.equal(made.length, 2, "the later caller gets a read of its own");
  made[1].answer(40);
  assert.equal(await late, 40);
});

test("LinearizableRevisions.track() answers waiters from a read's answer too, whatever it was made for", async () => {
  const { made, read } = reads();
  const revisions = new LinearizableRevisions({ read, patienceMs: 60_000 });
  const write = pending();
  const written = revisions.track(true, () => write.promise);
  const asked = revisions.next();
  const range = pending();
  const ranged = revisions.track(false, () => range.promise);
  range.answer(50);
  await ranged;
  assert.equal(await asked, 50);
  write.answer(51);
  await written;
  assert.equal(made.length, 0);
});

test("LinearizableRevisions.close() rejects waiters and later callers", async () => {
  const { read } = reads();
  const revisions = new LinearizableRevisions({ read });
  const asked = revisions.next();
  revisions.close(new Error("closed"));
  await assert.rejects(asked, /closed/);
  await assert.rejects(revisions.next(), /closed/);
});
