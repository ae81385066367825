// Flow control in the spirit of kube-apiserver's API Priority and Fairness, for a server that runs on one thread.
//
// Seats. The in-flight flags are mapped as APF maps them: the server's seats are --max-requests-inflight plus
// --max-mutating-requests-inflight, shared by the priority levels (classify.ts) in nominal shares: `workload` 90 %,
// `unauthenticated` 10 % (at least one each); `exempt` takes none. Each flag still caps its own kind of request
// (read-only, mutating) across the levels. A request holds its seat until its answer is complete: written out to
// the client, so a slow reader of a large answer keeps paying for it. Both flags 0: no flow control at all.
//
// Fair shares of the thread between levels. Seats bound what a level holds at once, not how much of the one thread
// it takes: an unauthenticated login start costs several times an authenticated read's thread time, so a login
// storm served one for one beside a heavy user took most of the dispatching time. The next dispatch therefore goes to
// the level that has used the least thread time for its share (90:10, the seats' shares), each dispatch charged
// what it took: from its step until the microtasks it started have all run (an estimate is charged at dispatch
// and corrected then), as APF's work estimates weigh requests instead of counting them. A level that had nothing
// waiting starts again at the time of the last dispatch, so it banks no credit while idle; and a level alone with
// work gets every dispatch.
//
// Fair queuing per flow. Within a level every flow (a user; for anonymous requests a client address) has its own
// FIFO queue of at most 50 requests (all of a level's queues together: 4x its seats, at least 200), and the next
// seat goes to the flow that has used the least: each flow carries a virtual time advanced by the work it was
// served, measured as the bytes of its answers plus a fixed cost per request (an estimate is charged at dispatch
// and corrected at completion). We keep exact per-flow queues rather than APF's shuffle sharding: flows exist only
// while they have requests queued or executing, so their number is bounded by the queues themselves, and no light
// user ever shares a queue with a heavy one. A flow whose queue is full, or a level whose queues are full, gets
// 429 with Retry-After; so does a request that waited 15 s.
//
// Answers being written. A flow whose answers still being written exceed 16 MiB waits until they drain (all
// flows' together: 256 MiB), and an answer not written out within 60 s has its connection closed: a client that
// reads slowly, or not at all, cannot hold a seat or memory for long.
//
// Dispatch on the event loop's own turns. Requests are dispatched from setImmediate steps, at most about 1 ms of
// them per turn of the event loop, so the poll phase (new requests, exempt ones among them) comes round after at
// most that plus one request's work however many requests wait: a user saturating the server with expensive reads
// cannot push an admin's GET (exempt: served as it arrives) or anyone's I/O behind a long run of his own work. In a
// closed loop this costs no throughput: arrivals and dispatches settle at the same rate.
//
// Rests when the CPU is contended. A thread that always has queued work never sleeps, and where other processes
// want the same CPU the kernel preempts it for whole time slices (several ms each, many a second): an exempt request
// arriving then waits them out, however short the turns. So while the request thread waits for a CPU a tenth of
// the time or more (cpu-contention.ts), a turn whose dispatch budget is spent is followed by a rest of one budget
// before dispatching goes on: the loop sleeps, and the next request (an admin's) wakes a thread the kernel runs at
// once. Queued work then gets at most about half the thread while other processes compete for the CPU (the
// attackers of bench/hostile.ts lost a third of their answers); on an uncontended CPU nothing rests.
//
// Refusals wait. A request refused for a full queue is answered after Retry-After (1 s), not at once: a client
// that ignores Retry-After and asks again at once (as a hostile one does) would otherwise keep the server busy
// answering refusals; this way each of its connections costs one refusal a second. Refusals falling due are
// answered by the dispatch steps within the same budget per turn, so hundreds that fall due together do not stall
// the loop either.

import { performance } from "node:perf_hooks";
import type { StatusError } from "../../apimachinery/errors.ts";
import type { Classification, FlowSchema, PriorityLevel } from "./classify.ts";
import { RETRY_AFTER_SECONDS, type RejectionReason, refusals } from "./refusals.ts";

export type RequestKind = "readOnly" | "mutating";
export type FlowRejection = RejectionReason | "cancelled";

export interface FlowControlOptions {
  /** --max-requests-inflight: read-only requests executing at once (0: no cap). */
  maxReadOnly: number;
  /** --max-mutating-requests-inflight: mutating requests executing at once (0: no cap). */
  maxMutating: number;
  /** Requests one flow may have waiting (default 50, APF's queueLengthLimit). */
  queueLengthLimit?: number;
  /** How long a request may wait for a seat (default 15 s). */
  waitLimitMs?: number;
  /** Bytes of a flow's answers still being written past which its next request waits (default 16 MiB). */
  flowBytesLimit?: number;
  /** The same for all flows together: past it no request is dispatched until answers drain (default 256 MiB). */
  totalBytesLimit?: number;
  /** An answer still being written after this long has its connection closed (default 60 s). */
  answerTimeoutMs?: number;
  /** Time per event loop turn spent dispatching queued requests (default 1 ms). */
  turnBudgetMs?: number;
  /**
   * How long a refusal for a full queue waits before it is answered (default Retry-After): a client that does not
   * wait out Retry-After cannot make its refusals a loop the server spends its time on.
   */
  refusalDelayMs?: number;
  observer?: FlowObserver;
  /**
   * Whether the request thread is waiting for a CPU (default never): then a turn whose dispatch budget is spent is
   * followed by a rest of one budget.
   */
  cpuContended?: () => boolean;
  /** The clock of waits, turns and dispatch times, ms (default performance.now; tests give their own). */
  now?: () => number;
}

/** Events for metrics. */
export interface FlowObserver {
  dispatched?(level: PriorityLevel, schema: FlowSchema, waitSeconds: number): void;
  /** An answer was not written out within the answer timeout: its connection was closed. */
  answerTimedOut?(level: PriorityLevel, schema: FlowSchema): void;
  rejected?(level: PriorityLevel, schema: FlowSchema, kind: RequestKind, reason: FlowRejection): void;
}

export interface FlowRequest {
  classification: Classification;
  kind: RequestKind;
  /** The client's connection: a request whose client left while it waited is dropped, not served. */
  connection?: { readonly destroyed: boolean };
  /** Ends the request's connection (an answer not written out in time). */
  abort?(): void;
}

export interface FlowTicket {
  readonly classification: Classification;
  readonly kind: RequestKind;
  /** The answer's body is being written: its bytes count against the flow until release(). */
  sending(bytes: number): void;
  /** The answer is complete or abandoned: the seat is free. Safe to call more than once. */
  release(): void;
}

export interface LevelState {
  name: PriorityLevel;
  /** Seats of the level (Infinity: not limited). */
  seats: number;
  executing: number;
  waiting: number;
}

const SHARES: Record<Exclude<PriorityLevel, "exempt">, number> = { workload: 90, unauthenticated: 10 };
/** The work every request costs besides its answer's bytes (parsing, authentication, the store). */
const REQUEST_COST = 2048;
const SWEEP_MS = 250;
/** A dispatch's thread time assumed before one was measured, ms. */
const INITIAL_DISPATCH_MS = 0.25;
const MAX_STEPS_PER_TURN = 64;

class Flow {
  readonly key: string;
  readonly queue: Waiter[] = [];
  executing = 0;
  bytesInFlight = 0;
  virtualTime: number;
  /** Running estimate of one request's cost (charged at dispatch, corrected at completion). */
  estimate = REQUEST_COST;

  constructor(key: string, virtualTime: number) {
    this.key = key;
    this.virtualTime = virtualTime;
  }
}

interface Waiter {
  request: FlowRequest;
  enqueuedAt: number;
  resolve(ticket: FlowTicket): void;
  reject(error: StatusError): void;
}

class Level {
  readonly name: PriorityLevel;
  readonly seats: number;
  /** Share of the thread's dispatch time when several levels have work (SHARES). */
  readonly share: number;
  /** Thread time used for its share (ms / share): the level with the least goes next. */
  threadTime = 0;
  /** Running estimate of one dispatch's thread time, ms (charged at dispatch, corrected once measured). */
  dispatchMs = INITIAL_DISPATCH_MS;
  readonly queueCapacity: number;
  executing = 0;
  waiting = 0;
  /** Virtual time of the last dispatch: where a flow that was idle starts again. */
  clock = 0;
  readonly flows = new Map<string, Flow>();
  /** Flows with requests waiting. */
  readonly active = new Set<Flow>();

  constructor(name: Exclude<PriorityLevel, "exempt">, seats: number, queueLengthLimit: number) {
    this.name = name;
    this.seats = seats;
    this.share = SHARES[name];
    this.queueCapacity = Number.isFinite(seats) ? 4 * Math.max(queueLengthLimit, seats) : Number.POSITIVE_INFINITY;
  }

  flow(key: string): Flow {
    let flow = this.flows.get(key);
    if (!flow) {
      flow = new Flow(key, this.clock);
      this.flows.set(key, flow);
    }
    return flow;
  }

  forgetIfIdle(flow: Flow): void {
    if (flow.executing === 0 && flow.queue.length === 0) this.flows.delete(flow.key);
  }
}

/** Tickets of exempt requests: nothing to count or give back. */
function exemptTicket(classification: Classification, kind: RequestKind): FlowTicket {
  return { classification, kind, sending() {}, release() {} };
}

export class FlowControl {
  private readonly options: Required<Omit<FlowControlOptions, "observer" | "now" | "cpuContended">>;
  private readonly now: () => number;
  private readonly cpuContended: () => boolean;
  /** Set while the thread rests after a spent turn (a contended CPU): nothing is dispatched until it fires. */
  private restTimer: NodeJS.Timeout | undefined;
  private readonly observer: FlowObserver;
  private readonly levels: Level[];
  private readonly byName = new Map<PriorityLevel, Level>();
  /** Requests executing by kind (exempt ones not counted), and the caps the flags set. */
  readonly executingByKind: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private readonly kindCaps: Record<RequestKind, number>;
  private readonly enabled: boolean;
  private waitingTotal = 0;
  /** Refusals waiting to be answered, in the order they are due (the delay is the same for all). */
  private readonly refusals: { due: number; error: StatusError; reject(error: StatusError): void }[] = [];
  /** Refusals due now, answered by the dispatch steps. */
  private dueRefusals = 0;
  private refusalTimer: NodeJS.Timeout | undefined;
  /** Thread time (per share) of the last dispatch: where a level that had nothing waiting starts again. */
  private levelClock = 0;
  private pendingSteps = 0;
  private openGeneration = 1;
  private runningGeneration = 0;
  private turnStart = 0;
  private sweeper: NodeJS.Timeout | undefined;
  /** Bytes of all answers still being written (for metrics: answerBytes()). */
  private bytesInFlight = 0;
  /** Answers being written, with when they began: the sweeper closes those past the answer timeout. */
  private readonly writing = new Map<FlowTicket, { since: number; request: FlowRequest; level: Level }>();

  constructor(options: FlowControlOptions) {
    this.options = {
      maxReadOnly: options.maxReadOnly,
      maxMutating: options.maxMutating,
      queueLengthLimit: options.queueLengthLimit ?? 50,
      waitLimitMs: options.waitLimitMs ?? 15_000,
      flowBytesLimit: options.flowBytesLimit ?? 16 * 1024 * 1024,
      totalBytesLimit: options.totalBytesLimit ?? 256 * 1024 * 1024,
      answerTimeoutMs: options.answerTimeoutMs ?? 60_000,
      turnBudgetMs: options.turnBudgetMs ?? 1,
      refusalDelayMs: options.refusalDelayMs ?? RETRY_AFTER_SECONDS * 1000,
    };
    this.observer = options.observer ?? {};
    this.now = options.now ?? (() => performance.now());
    this.cpuContended = options.cpuContended ?? (() => false);
    const cap = (n: number) => (n > 0 ? n : Number.POSITIVE_INFINITY);
    this.kindCaps = { readOnly: cap(options.maxReadOnly), mutating: cap(options.maxMutating) };
    this.enabled = options.maxReadOnly > 0 || options.maxMutating > 0;
    const total = this.kindCaps.readOnly + this.kindCaps.mutating;
    const unauthenticated = Number.isFinite(total)
      ? Math.max(1, Math.floor((total * SHARES.unauthenticated) / 100))
      : total;
    const workload = Number.isFinite(total) ? Math.max(1, total - unauthenticated) : total;
    this.levels = [
      new Level("workload", workload, this.options.queueLengthLimit),
      new Level("unauthenticated", unauthenticated, this.options.queueLengthLimit),
    ];
    for (const level of this.levels) this.byName.set(level.name, level);
  }

  /** The levels' seats and what they hold now (for metrics). */
  levelStates(): LevelState[] {
    return this.levels.map(({ name, seats, executing, waiting }) => ({ name, seats, executing, waiting }));
  }

  /** Bytes of the answers being written now (non-exempt requests). */
  answerBytes(): number {
    return this.bytesInFlight;
  }

  /** Requests of one flow waiting now (tests, metrics). */
  waitingOf(level: PriorityLevel, flow: string): number {
    return this.byName.get(level)?.flows.get(flow)?.queue.length ?? 0;
  }

  /**
   * A seat for the request: at once for exempt requests, else once its turn comes. Rejects (throws for a full
   * queue) with the 429 StatusError of refusals.ts.
   */
  admit(request: FlowRequest): FlowTicket | Promise<FlowTicket> {
    const { classification, kind } = request;
    const level = this.byName.get(classification.level);
    if (!level || !this.enabled) {
      this.observer.dispatched?.(classification.level, classification.schema, 0);
      return exemptTicket(classification, kind);
    }
    const flow = level.flow(classification.flow);
    if (flow.queue.length >= this.options.queueLengthLimit || level.waiting >= level.queueCapacity) {
      level.forgetIfIdle(flow);
      this.observer.rejected?.(level.name, classification.schema, kind, "queue-full");
      const refusal = refusals.queueFull(level.name);
      if (this.options.refusalDelayMs <= 0) throw refusal;
      return new Promise((_resolve, reject) => this.refuseLater(refusal, reject));
    }
    return new Promise<FlowTicket>((resolve, reject) => {
      flow.queue.push({ request, enqueuedAt: this.now(), resolve, reject });
      if (flow.queue.length === 1) level.active.add(flow);
      if (level.waiting === 0) level.threadTime = Math.max(level.threadTime, this.levelClock);
      level.waiting++;
      this.waitingTotal++;
      this.schedule();
      this.keepSweeping();
    });
  }

  /** Stops the sweeper; requests still waiting are rejected, held refusals answered. */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    clearTimeout(this.refusalTimer);
    this.refusalTimer = undefined;
    clearTimeout(this.restTimer);
    this.restTimer = undefined;
    for (const refusal of this.refusals.splice(0)) refusal.reject(refusal.error);
    this.dueRefusals = 0;
    this.writing.clear();
    for (const level of this.levels) {
      for (const flow of [...level.active]) {
        while (flow.queue.length > 0) this.drop(level, flow, "time-out");
      }
    }
  }

  /** Schedules dispatch steps for the coming check phase (or the next turn's, when called from one). */
  private schedule(): void {
    if (this.restTimer) return;
    const wanted = Math.min(MAX_STEPS_PER_TURN, this.waitingTotal + this.dueRefusals) - this.pendingSteps;
    const generation = this.openGeneration;
    for (let i = 0; i < wanted; i++) {
      this.pendingSteps++;
      setImmediate(this.step, generation);
    }
  }

  /** One dispatch, unless this turn's budget is spent (then the rest waits for the next turn). */
  private readonly step = (generation: number): void => {
    this.pendingSteps--;
    const now = this.now();
    if (generation !== this.runningGeneration) {
      // The first step of this turn: later schedule() calls belong to the next one.
      this.runningGeneration = generation;
      this.openGeneration = generation + 1;
      this.turnStart = now;
    } else if (now - this.turnStart >= this.options.turnBudgetMs) {
      if (this.cpuContended()) this.rest();
      else this.schedule();
      return;
    }
    if (this.dueRefusals > 0) this.answerRefusal();
    else this.dispatchOne();
  };

  /** Lets the loop sleep for one turn's budget before dispatching goes on. */
  private rest(): void {
    this.restTimer ??= setTimeout(() => {
      this.restTimer = undefined;
      this.schedule();
    }, this.options.turnBudgetMs);
  }

  /**
   * Holds a refusal until it is due; then the dispatch steps answer it within their budget per turn, as they
   * dispatch requests: refusals that fall due together (clients that came back together) are spread over turns,
   * not answered in one long run.
   */
  private refuseLater(error: StatusError, reject: (error: StatusError) => void): void {
    this.refusals.push({ due: Date.now() + this.options.refusalDelayMs, error, reject });
    this.armRefusalTimer();
  }

  private armRefusalTimer(): void {
    if (this.refusalTimer || this.refusals.length === this.dueRefusals) return;
    const next = this.refusals[this.dueRefusals];
    this.refusalTimer = setTimeout(
      () => {
        this.refusalTimer = undefined;
        const now = Date.now();
        while (this.dueRefusals < this.refusals.length && this.refusals[this.dueRefusals].due <= now) {
          this.dueRefusals++;
        }
        this.schedule();
        this.armRefusalTimer();
      },
      Math.max(0, next.due - Date.now()),
    );
  }

  private answerRefusal(): void {
    const refusal = this.refusals.shift();
    this.dueRefusals--;
    refusal?.reject(refusal.error);
  }

  /** One dispatch, from the level that has used the least thread time for its share and can dispatch now. */
  private dispatchOne(): void {
    const order = this.levels.length > 1 ? [...this.levels].sort((a, b) => a.threadTime - b.threadTime) : this.levels;
    for (const level of order) {
      if (level.waiting > 0 && this.dispatchFrom(level)) return;
    }
  }

  /**
   * Charges `level` the thread time of the dispatch starting now: an estimate at once, corrected by what it took
   * once the microtasks it starts (the request's synchronous work and whatever resolves at once) have all run.
   */
  private chargeThreadTime(level: Level): void {
    const started = this.now();
    const estimate = level.dispatchMs;
    this.levelClock = Math.max(this.levelClock, level.threadTime);
    level.threadTime += estimate / level.share;
    // A tick queued from a microtask runs once the microtask queue is empty, before the next step.
    queueMicrotask(() =>
      process.nextTick(() => {
        const took = this.now() - started;
        level.threadTime += (took - estimate) / level.share;
        level.dispatchMs = 0.75 * level.dispatchMs + 0.25 * took;
      }),
    );
  }

  private dispatchFrom(level: Level): boolean {
    if (level.executing >= level.seats || this.bytesInFlight >= this.options.totalBytesLimit) return false;
    let chosen: Flow | undefined;
    for (const flow of level.active) {
      const head = flow.queue[0];
      if (head.request.connection?.destroyed) {
        // The client left while it waited: nothing to serve.
        this.drop(level, flow, "cancelled");
        if (flow.queue.length === 0) continue;
      }
      if (flow.bytesInFlight >= this.options.flowBytesLimit) continue;
      const kind = flow.queue[0].request.kind;
      if (this.executingByKind[kind] >= this.kindCaps[kind]) continue;
      if (!chosen || flow.virtualTime < chosen.virtualTime) chosen = flow;
    }
    if (!chosen) return false;
    const waiter = this.take(level, chosen);
    const { request } = waiter;
    level.clock = Math.max(level.clock, chosen.virtualTime);
    const charged = chosen.estimate;
    chosen.virtualTime += charged;
    chosen.executing++;
    level.executing++;
    this.executingByKind[request.kind]++;
    this.observer.dispatched?.(level.name, request.classification.schema, (this.now() - waiter.enqueuedAt) / 1000);
    this.chargeThreadTime(level);
    waiter.resolve(this.ticket(level, chosen, request, charged));
    return true;
  }

  private ticket(level: Level, flow: Flow, request: FlowRequest, charged: number): FlowTicket {
    let bytes = 0;
    let released = false;
    const ticket: FlowTicket = {
      classification: request.classification,
      kind: request.kind,
      sending: (count) => {
        if (released) return;
        if (bytes === 0) {
          this.writing.set(ticket, { since: this.now(), request, level });
          this.keepSweeping();
        }
        bytes += count;
        flow.bytesInFlight += count;
        this.bytesInFlight += count;
      },
      release: () => {
        if (released) return;
        released = true;
        this.writing.delete(ticket);
        level.executing--;
        this.executingByKind[request.kind]--;
        flow.executing--;
        flow.bytesInFlight -= bytes;
        this.bytesInFlight -= bytes;
        const cost = bytes + REQUEST_COST;
        flow.virtualTime += cost - charged;
        flow.estimate = Math.round(0.75 * flow.estimate + 0.25 * cost);
        level.forgetIfIdle(flow);
        if (this.waitingTotal > 0) this.schedule();
      },
    };
    return ticket;
  }

  private take(level: Level, flow: Flow): Waiter {
    const waiter = flow.queue.shift() as Waiter;
    if (flow.queue.length === 0) level.active.delete(flow);
    level.waiting--;
    this.waitingTotal--;
    return waiter;
  }

  private drop(level: Level, flow: Flow, reason: FlowRejection): void {
    const waiter = this.take(level, flow);
    const { classification, kind } = waiter.request;
    this.observer.rejected?.(level.name, classification.schema, kind, reason);
    waiter.reject(reason === "time-out" ? refusals.timeOut(level.name) : refusals.queueFull(level.name));
    level.forgetIfIdle(flow);
  }

  /** Runs the sweeper while anything waits or is being written. */
  private keepSweeping(): void {
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /**
   * Rejects the requests that waited longer than the limit (queues are FIFO: only heads need looking at), and closes
   * the connections of answers not written out within the answer timeout.
   */
  private sweep(): void {
    const now = this.now();
    const oldest = now - this.options.waitLimitMs;
    for (const level of this.levels) {
      for (const flow of [...level.active]) {
        while (flow.queue.length > 0 && flow.queue[0].enqueuedAt <= oldest) this.drop(level, flow, "time-out");
      }
    }
    for (const [ticket, answer] of this.writing) {
      if (now - answer.since < this.options.answerTimeoutMs) continue;
      this.writing.delete(ticket);
      this.observer.answerTimedOut?.(answer.level.name, answer.request.classification.schema);
      answer.request.abort?.();
    }
    if (this.waitingTotal === 0 && this.writing.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
