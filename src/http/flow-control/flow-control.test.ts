import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { Classification } from "./classify.ts";
import { FlowControl, type FlowRejection, type FlowTicket, type RequestKind } from "./flow-control.ts";

const user = (flow: string): Classification => ({ level: "workload", schema: "authenticated", flow });
const exempt: Classification = { level: "exempt", schema: "exempt", flow: "" };
const anonymous = (address: string): Classification => ({
  level: "unauthenticated",
  schema: "unauthenticated",
  flow: address,
});

/**
 * Admits a request that takes `ms` of the thread once dispatched (on the test's clock, which FlowControl reads) and
 * gives its seat back at once; records its level in dispatch order.
 */
function timed(
  control: FlowControl,
  classification: Classification,
  ms: number,
  clock: { ms: number },
  order: string[],
) {
  return Promise.resolve(control.admit({ classification, kind: "readOnly" })).then((ticket) => {
    order.push(classification.level);
    clock.ms += ms;
    ticket.release();
  });
}

const count = (order: string[], level: string) => order.filter((l) => l === level).length;

/** Admits a request and records when (in dispatch order) it got its seat. */
function request(control: FlowControl, flow: string, order: string[], kind: RequestKind = "readOnly") {
  const admitted = control.admit({ classification: user(flow), kind });
  return Promise.resolve(admitted).then((ticket) => {
    order.push(flow);
    return ticket;
  });
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

const tooMany = (error: unknown) =>
  isStatusError(error) && error.code === 429 && error.headers?.["Retry-After"] === "1";

describe("FlowControl", () => {
  it("FlowControl.admit() lets exempt requests in at once, and others once a seat of their level is free", async () => {
    // 3 seats: 1 for unauthenticated requests (at least one), 2 for the workload level.
    const control = new FlowControl({ maxReadOnly: 2, maxMutating: 1 });
    const ticket = control.admit({ classification: exempt, kind: "readOnly" });
    assert.ok(!(ticket instanceof Promise), "exempt: no waiting");
    const order: string[] = [];
    const first = await request(control, "bob", order, "readOnly");
    const second = await request(control, "bob", order, "mutating");
    const third = request(control, "bob", order, "readOnly");
    await until(() => control.waitingOf("workload", "bob") === 1);
    assert.deepEqual(order, ["bob", "bob"], "the level's two seats are taken: the next read waits");
    first.release();
    await third;
    assert.deepEqual(order, ["bob", "bob", "bob"]);
    second.release();
    control.close();
  });

  it("FlowControl gives the next seat to the flow that used least: a light user overtakes a heavy user's queue", async () => {
    const control = new FlowControl({ maxReadOnly: 1, maxMutating: 0 });
    const order: string[] = [];
    const held = await request(control, "bob", order);
    held.sending(1_000_000);
    const bobs = Array.from({ length: 5 }, () => request(control, "bob", order));
    await until(() => control.waitingOf("workload", "bob") === 5);
    const alice = request(control, "alice", order);
    held.release();
    const tickets: FlowTicket[] = [];
    for (let i = 0; i < 6; i++) {
      await until(() => order.length === i + 2);
      tickets.push(await (i === 0 ? alice : bobs[i - 1]));
      tickets[i].release();
    }
    assert.deepEqual(order, ["bob", "alice", "bob", "bob", "bob", "bob", "bob"]);
    control.close();
  });

  it("FlowControl shares the thread between levels by the time their requests take, not one request for one", async () => {
    const clock = { ms: 0 };
    const control = new FlowControl({ maxReadOnly: 40, maxMutating: 0, now: () => clock.ms });
    const order: string[] = [];
    // An unauthenticated request (a login start) takes ten times an authenticated read; both levels have work.
    const requests = [
      ...Array.from({ length: 45 }, () => timed(control, user("bob"), 1, clock, order)),
      ...Array.from({ length: 45 }, (_, i) => timed(control, anonymous(`10.0.0.${i % 4}`), 10, clock, order)),
    ];
    await Promise.all(requests);
    // By time at 90:10, the workload level gets about ninety reads for each login start while both wait (one for
    // one, the logins would take 10/11 of the thread).
    const whileBothWaited = order.slice(0, 45);
    assert.ok(count(whileBothWaited, "unauthenticated") <= 3, `dispatch order: ${order.join(" ")}`);
    assert.equal(count(order, "unauthenticated"), 45, "a level alone with work gets every dispatch");
    control.close();
  });

  it("FlowControl lets a level that had nothing waiting start at the others' time: no credit banked while idle", async () => {
    const clock = { ms: 0 };
    const control = new FlowControl({ maxReadOnly: 40, maxMutating: 0, now: () => clock.ms });
    const order: string[] = [];
    await Promise.all(Array.from({ length: 30 }, () => timed(control, user("bob"), 30, clock, order)));
    order.length = 0;
    await Promise.all([
      ...Array.from({ length: 10 }, () => timed(control, user("bob"), 1, clock, order)),
      ...Array.from({ length: 10 }, (_, i) => timed(control, anonymous(`10.0.0.${i % 4}`), 10, clock, order)),
    ]);
    // Had the unauthenticated level kept its time from before the workload's 900 ms, its logins would all go first.
    assert.ok(count(order.slice(0, 10), "unauthenticated") <= 2, `dispatch order: ${order.join(" ")}`);
    control.close();
  });

  it("FlowControl answers 429 with Retry-After past a flow's queue while another flow is still queued and served", async () => {
    const rejected: FlowRejection[] = [];
    const control = new FlowControl({
      maxReadOnly: 1,
      maxMutating: 0,
      queueLengthLimit: 3,
      refusalDelayMs: 0,
      observer: { rejected: (_level, _schema, _kind, reason) => rejected.push(reason) },
    });
    const order: string[] = [];
    const held = await request(control, "bob", order);
    const queued = Array.from({ length: 3 }, () => request(control, "bob", order));
    assert.throws(() => control.admit({ classification: user("bob"), kind: "readOnly" }), tooMany);
    assert.deepEqual(rejected, ["queue-full"]);
    const alice = request(control, "alice", order);
    held.release();
    (await alice).release();
    for (const ticket of queued) (await ticket).release();
    assert.equal(order[1], "alice");
    control.close();
  });

  it("FlowControl answers a refusal for a full queue only after Retry-After, so hammering clients cost one a second", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
    const control = new FlowControl({ maxReadOnly: 1, maxMutating: 0, queueLengthLimit: 1 });
    const held = await request(control, "bob", []);
    const queued = request(control, "bob", []);
    let answered: unknown;
    Promise.resolve(control.admit({ classification: user("bob"), kind: "readOnly" })).catch((error) => {
      answered = error;
    });
    t.mock.timers.tick(999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, undefined, "not yet");
    t.mock.timers.tick(1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(tooMany(answered));
    held.release();
    (await queued).release();
    control.close();
  });

  it("FlowControl caps each kind by its own flag: a mutating request waits while reads go on", async () => {
    const control = new FlowControl({ maxReadOnly: 5, maxMutating: 1 });
    const order: string[] = [];
    const write = await request(control, "bob", order, "mutating");
    const secondWrite = request(control, "bob", order, "mutating");
    const read = await request(control, "alice", order, "readOnly");
    assert.equal(control.executingByKind.mutating, 1);
    assert.equal(control.waitingOf("workload", "bob"), 1);
    write.release();
    (await secondWrite).release();
    read.release();
    assert.deepEqual(control.executingByKind, { readOnly: 0, mutating: 0 });
    control.close();
  });

  it("FlowControl holds a flow back while its answers still being written pass the byte limit", async () => {
    const control = new FlowControl({ maxReadOnly: 10, maxMutating: 0, flowBytesLimit: 1000 });
    const order: string[] = [];
    const big = await request(control, "bob", order);
    big.sending(1000);
    const next = request(control, "bob", order);
    const other = await request(control, "alice", order);
    assert.equal(control.waitingOf("workload", "bob"), 1, "bob waits for his answer to drain; alice does not");
    big.release();
    (await next).release();
    other.release();
    control.close();
  });

  it("FlowControl holds every flow back while all answers being written pass the total byte limit", async () => {
    const control = new FlowControl({ maxReadOnly: 10, maxMutating: 0, flowBytesLimit: 1000, totalBytesLimit: 1500 });
    const order: string[] = [];
    const bobs = await request(control, "bob", order);
    bobs.sending(900);
    const carols = await request(control, "carol", order);
    carols.sending(900);
    const alice = request(control, "alice", order);
    await until(() => control.waitingOf("workload", "alice") === 1);
    bobs.release();
    (await alice).release();
    carols.release();
    control.close();
  });

  it("FlowControl closes the connection of an answer not written out within the answer timeout", async () => {
    let aborted = 0;
    const timedOut: string[] = [];
    const control = new FlowControl({
      maxReadOnly: 10,
      maxMutating: 0,
      answerTimeoutMs: 20,
      observer: { answerTimedOut: (level) => timedOut.push(level) },
    });
    const slow = await control.admit({
      classification: user("bob"),
      kind: "readOnly",
      abort: () => {
        aborted++;
      },
    });
    slow.sending(100);
    await until(() => aborted === 1);
    assert.deepEqual(timedOut, ["workload"]);
    slow.release();
    const quick = await control.admit({ classification: user("bob"), kind: "readOnly", abort: () => aborted++ });
    quick.sending(100);
    quick.release();
    assert.equal(aborted, 1, "an answer written in time is left alone");
    control.close();
  });

  it("FlowControl answers 429 to a request that waited past the wait limit", async () => {
    const control = new FlowControl({ maxReadOnly: 1, maxMutating: 0, waitLimitMs: 20 });
    const held = await request(control, "bob", []);
    await assert.rejects(request(control, "alice", []), tooMany);
    held.release();
    control.close();
  });

  it("FlowControl drops a waiting request whose client left instead of serving it", async () => {
    const rejected: FlowRejection[] = [];
    const control = new FlowControl({
      maxReadOnly: 1,
      maxMutating: 0,
      observer: { rejected: (_level, _schema, _kind, reason) => rejected.push(reason) },
    });
    const held = await request(control, "bob", []);
    const connection = { destroyed: false };
    const gone = control.admit({ classification: user("alice"), kind: "readOnly", connection });
    connection.destroyed = true;
    held.release();
    await assert.rejects(Promise.resolve(gone), tooMany);
    assert.deepEqual(rejected, ["cancelled"]);
    control.close();
  });

  it("FlowControl gives the event loop a turn between queued requests whose work outlasts the turn's budget", async () => {
    const control = new FlowControl({ maxReadOnly: 100, maxMutating: 0, turnBudgetMs: 1 });
    let turns = 0;
    let counting = true;
    const countTurns = () => {
      turns++;
      if (counting) setTimeout(countTurns, 0);
    };
    setTimeout(countTurns, 0);
    const turnOf: number[] = [];
    const work = Array.from({ length: 6 }, () =>
      Promise.resolve(control.admit({ classification: user("bob"), kind: "readOnly" })).then((ticket) => {
        turnOf.push(turns);
        const end = performance.now() + 3; // longer than the budget, however busy the machine
        while (performance.now() < end);
        ticket.release();
      }),
    );
    await Promise.all(work);
    counting = false;
    assert.equal(new Set(turnOf).size, turnOf.length, `one per turn: ${turnOf}`);
    control.close();
  });

  it("FlowControl rests after a spent turn while the CPU is contended, and only then", async () => {
    for (const contended of [true, false]) {
      const clock = { ms: 0 };
      // A rest lasts one turn's budget: a minute here, so none ends while the test waits.
      const control = new FlowControl({
        maxReadOnly: 100,
        maxMutating: 0,
        turnBudgetMs: 60_000,
        now: () => clock.ms,
        cpuContended: () => contended,
      });
      const order: string[] = [];
      const work = Array.from({ length: 3 }, () => timed(control, user("bob"), 60_000, clock, order));
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      if (contended) {
        assert.equal(order.length, 1, "the first request spent the turn's budget: the thread rests");
        control.close();
        await Promise.allSettled(work);
      } else {
        assert.equal(order.length, 3, "uncontended: each turn dispatches again at once");
        await Promise.all(work);
        control.close();
      }
    }
  });

  it("FlowControl answers refusals that fall due together a turn's budget at a time", async () => {
    const control = new FlowControl({ maxReadOnly: 1, maxMutating: 0, queueLengthLimit: 1, refusalDelayMs: 5 });
    const held = await request(control, "bob", []);
    const queued = request(control, "bob", []);
    let turns = 0;
    let counting = true;
    const countTurns = () => {
      turns++;
      if (counting) setTimeout(countTurns, 0);
    };
    setTimeout(countTurns, 0);
    const turnOf: number[] = [];
    const refused = Array.from({ length: 6 }, () =>
      Promise.resolve(control.admit({ classification: user("bob"), kind: "readOnly" })).catch(() => {
        turnOf.push(turns);
        const end = performance.now() + 3; // an answer that outlasts the budget, however busy the machine
        while (performance.now() < end);
      }),
    );
    await Promise.all(refused);
    counting = false;
    assert.equal(new Set(turnOf).size, turnOf.length, `one per turn: ${turnOf}`);
    held.release();
    (await queued).release();
    control.close();
  });

  it("FlowControl with both flags 0 limits nothing", () => {
    const control = new FlowControl({ maxReadOnly: 0, maxMutating: 0 });
    for (let i = 0; i < 1000; i++) {
      assert.ok(!(control.admit({ classification: user("bob"), kind: "mutating" }) instanceof Promise));
    }
  });
});
