import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuditBatchError } from "./audit-batch-sender.ts";
import { AuditForwarder } from "./audit-forwarder.ts";

const line = (id: number) => JSON.stringify({ kind: "Event", auditID: `e${id}` });
const INSTANCE = { namespace: "p-demo", name: "vc1" };

/** Stands in for the platform's intake: answers, refuses or is unreachable as the test says. */
function platform() {
  const received: string[] = [];
  const state = { connected: true, reachable: true, syncBackDisabled: false };
  return {
    received,
    state,
    target: {
      instance: () => (state.connected ? INSTANCE : undefined),
      async send(instance: typeof INSTANCE, events: unknown[]) {
        assert.deepEqual(instance, INSTANCE);
        if (!state.reachable) throw new Error("connect ECONNREFUSED 127.0.0.1:443");
        if (state.syncBackDisabled) {
          throw new AuditBatchError(403, "the platform's audit config sets disableAgentSyncBack: not taken");
        }
        for (const event of events) received.push((event as { auditID: string }).auditID);
      },
    },
  };
}

describe("AuditForwarder", () => {
  it("add() keeps events while the platform is unreachable and sends them in order when it returns", async () => {
    const p = platform();
    const forwarder = new AuditForwarder({ target: p.target, intervalMs: 60_000 });
    p.state.connected = false;
    forwarder.add([line(1), line(2)]);
    await forwarder.flush();
    assert.deepEqual(p.received, [], "nothing is sent before the connection exists");
    p.state.connected = true;
    p.state.reachable = false;
    await forwarder.flush();
    assert.match(forwarder.stats().lastError ?? "", /ECONNREFUSED/);
    forwarder.add([line(3)]);
    assert.equal(forwarder.stats().buffered, 3);
    p.state.reachable = true;
    await forwarder.close(); // close retries at once, whatever the backoff
    assert.deepEqual(p.received, ["e1", "e2", "e3"]);
    assert.equal(forwarder.stats().lastError, undefined);
  });

  it("add() drops the newest events past the bound and counts them", async () => {
    const p = platform();
    p.state.reachable = false;
    const forwarder = new AuditForwarder({ target: p.target, intervalMs: 60_000, maxBuffered: 3 });
    forwarder.add([1, 2, 3, 4, 5].map(line));
    assert.deepEqual(forwarder.stats().dropped, 2);
    p.state.reachable = true;
    await forwarder.close();
    assert.deepEqual(p.received, ["e1", "e2", "e3"]);
  });

  it("a platform with disableAgentSyncBack gets nothing: the buffer is discarded and sending pauses", async () => {
    const p = platform();
    p.state.syncBackDisabled = true;
    const forwarder = new AuditForwarder({ target: p.target, intervalMs: 60_000 });
    forwarder.add([line(1), line(2)]);
    await forwarder.flush();
    forwarder.add([line(3)]);
    const stats = forwarder.stats();
    assert.equal(stats.syncBackDisabled, true);
    assert.equal(stats.discarded, 3);
    assert.equal(stats.buffered, 0);
    await forwarder.close();
    assert.deepEqual(p.received, []);
  });

  it("an event larger than the platform takes (413) is dropped alone; batches stay under 1 MiB", async () => {
    const batches: number[] = [];
    const big = JSON.stringify({ kind: "Event", auditID: "big", responseObject: "x".repeat(700 * 1024) });
    const huge = JSON.stringify({ kind: "Event", auditID: "huge", responseObject: "x".repeat(4 * 1024 * 1024) });
    const forwarder = new AuditForwarder({
      intervalMs: 60_000,
      target: {
        instance: () => INSTANCE,
        async send(_instance, events) {
          if (JSON.stringify(events).length > 3 * 1024 * 1024)
            throw new AuditBatchError(413, "request entity too large");
          batches.push(events.length);
        },
      },
    });
    forwarder.add([line(1), big, big, huge, line(2)]);
    await forwarder.close();
    assert.deepEqual(batches, [2, 1, 1], "line 1 and the first big one; the second big one; line 2");
    assert.equal(forwarder.stats().dropped, 1);
    assert.equal(forwarder.stats().sent, 4);
  });
});
