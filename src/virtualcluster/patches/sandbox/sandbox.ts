import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten";
import {
  currentEngine,
  discardEngine,
  type Engine,
  EngineUnavailableError,
  isCurrentGeneration,
  onEngineDiscarded,
} from "./engine.ts";
import { type ContextUse, ExpressionSyntaxError } from "./expression-check.ts";
import { locateInterruptCounter } from "./interrupt-counter.ts";
import { resolveLimits, type SandboxLimits } from "./limits.ts";
import { ERROR_MARK, RESULT_SEPARATOR } from "./prelude.ts";
import { findMagic } from "./progress.ts";
import { createRealm, type Realm } from "./realm.ts";
import { ThreadCpuClock } from "./thread-cpu-clock.ts";
import { WasmInt32 } from "./wasm-int32.ts";

// One QuickJS runtime and context per sandbox (one sandbox per compiled patch set), reused for every evaluation:
// building a hardened context costs ~8 ms, an evaluation of a compiled expression a few microseconds. Reuse is safe
// because the prelude deep-freezes the realm and every evaluation gets fresh copies of its inputs; after an evaluation
// that hit a limit (CPU, memory, stack) the runtime is thrown away and rebuilt before the next one, so not even a
// half-finished allocation survives.
//
// Limits of one evaluation: a CPU-time budget checked by QuickJS's interrupt handler, which is called at least every
// 16 poll points (interrupt-counter.ts). The handler compares the cheap wall clock first (CPU time never exceeds
// it); only once it has passed the budget does it read the thread's CPU clock, and a busy machine, where wall time
// runs ahead of CPU time, gets the difference: an expression is never stopped for time other work took. A budget
// starts from a CPU reading up to 5 % of it old (thread-cpu-clock.ts), so it may end that much late; memory: no
// growth of the engine heap by more than the budget
// (checked by the interrupt handler) and no single allocation above min(budget, 4 MiB or twice the result limit)
// (QuickJS's malloc limit), under the engine's hard heap ceiling; QuickJS's own stack limit. Evaluations run in
// batches, one host call each; the batch's progress counter (progress.ts) restarts the budgets at every evaluation.

/** Why an evaluation failed. `limit` failures (CPU, memory, stack, engine) also reset the sandbox. */
export class EvaluationError extends Error {
  readonly limit: boolean;
  /** Index of the failed request in its batch. */
  index = 0;
  constructor(message: string, limit = false) {
    super(message);
    this.name = "EvaluationError";
    this.limit = limit;
  }
}

/** The parts of an evaluation's `context` the host sets. */
export type SandboxInput = "vcluster" | "hostObject" | "virtualObject";
const INPUT_SLOTS: Record<SandboxInput, number> = { vcluster: 0, hostObject: 1, virtualObject: 2 };
const CONTEXT_USE: Record<ContextUse, number> = { none: 0, vcluster: 1, light: 2, full: 3 };

/** One evaluation: expression `id` on a matched value. */
export interface EvaluationRequest {
  id: number;
  /** `context.path`. */
  path: string;
  valueExists: boolean;
  value: unknown;
}

/** Result of one evaluation: a JSON value, or removal (null or undefined). */
export type EvaluationResult = { remove: true } | { remove: false; value: unknown };

interface Expression {
  program: string;
  contextUse: ContextUse;
  label: string;
}

interface State {
  engine: Engine;
  context: QuickJSContext;
  helpers: Realm["helpers"];
  progressBuffer: QuickJSHandle;
  /** Evaluations started, counted by the sandbox (see progress.ts). */
  progress: WasmInt32 | undefined;
  /** QuickJS's countdown to the next interrupt check (see interrupt-counter.ts). */
  interruptCounter: WasmInt32 | undefined;
  sentInputs: string[];
}

/** Building the realm and compiling are not user code but get a budget of their own. */
const SETUP_BUDGET_MS = 2000;
/** Poll points between interrupt checks while they come quickly (QuickJS's own default is 10,000). */
const CHECK_EVERY = 16;
/** An interval between checks longer than this means poll points are expensive: check at every one. */
const SLOW_INTERVAL_MS = 1;
const REMOVE: EvaluationResult = Object.freeze({ remove: true });

const liveSandboxes = new Set<WeakRef<ExpressionSandbox>>();
onEngineDiscarded(() => {
  for (const ref of liveSandboxes) {
    const sandbox = ref.deref();
    if (sandbox) sandbox.forgetEngine();
    else liveSandboxes.delete(ref);
  }
});

/** The thread's CPU clock, shared by every sandbox of the thread. */
const cpuClock = new ThreadCpuClock();
/** A budget may start from a reading this share of it old, so a batch's evaluations share one; it then ends that late. */
const READING_AGE_SHARE = 0.05;

export class ExpressionSandbox {
  readonly limits: SandboxLimits;
  private readonly expressions: Expression[] = [];
  private readonly inputs: string[] = ["null", "null", "null"];
  private readonly ref = new WeakRef(this);
  private state: State | undefined;
  private deadline = 0;
  /** The budget of the running evaluation, and the thread's CPU time (ms) when it started. */
  private budgetMs = 0;
  private cpuStart = 0;
  private heapCeiling = Number.POSITIVE_INFINITY;
  private seenProgress = 0;
  private lastCheck = 0;
  private interruptCalls = 0;
  /** The progress counter when the last call returned (read before anything is released). */
  private progressAtReturn = 0;
  private stopReason: "cpu" | "memory" | undefined;
  private dns: ((name: string) => string) | undefined;
  private disposed = false;

  constructor(limits: Partial<SandboxLimits> = {}) {
    this.limits = resolveLimits(limits);
    liveSandboxes.add(this.ref);
  }

  /** Compiles a checked program (see checkExpression) and returns its id. Throws ExpressionSyntaxError. */
  compile(program: string, contextUse: ContextUse, label = "expression"): number {
    const expression = { program, contextUse, label };
    this.compileInto(this.ready(), expression);
    this.expressions.push(expression);
    return this.expressions.length - 1;
  }

  /** How an expression uses `context` (so the caller knows what to pass). */
  contextUse(id: number): ContextUse {
    return this.expressions[id]?.contextUse ?? "none";
  }

  /** Sets `context.vcluster`, `context.hostObject` or `context.virtualObject` (JSON data or null). */
  setInput(input: SandboxInput, value: unknown): void {
    this.setInputText(input, JSON.stringify(value ?? null));
  }

  /** setInput with the value already as JSON text. */
  setInputText(input: SandboxInput, text: string): void {
    this.inputs[INPUT_SLOTS[input]] = text;
  }

  /** The implementation behind the `virtualToHostDNS` built-in. */
  setVirtualToHostDNS(implementation: ((name: string) => string) | undefined): void {
    this.dns = implementation;
  }

  /** Evaluates one expression. Throws EvaluationError. */
  evaluate(id: number, path: string, valueExists: boolean, value: unknown): EvaluationResult {
    return this.evaluateAll([{ id, path, valueExists, value }])[0];
  }

  /**
   * Evaluates requests in order, in one call into QuickJS when possible. Each evaluation has its own limits. Throws
   * EvaluationError with `index` set to the failed request; later requests are not evaluated.
   */
  evaluateAll(requests: readonly EvaluationRequest[]): EvaluationResult[] {
    for (const request of requests)
      if (!this.expressions[request.id]) throw new RangeError(`no expression ${request.id}`);
    const state = this.ready();
    if (requests.some((request) => this.expressions[request.id].contextUse !== "none")) this.flushInputs(state);
    if (state.progress || requests.length <= 1) return this.runBatch(state, requests, 0);
    // Without the progress counter, one call per evaluation keeps the limits per evaluation.
    return requests.flatMap((request, index) => this.runBatch(state, [request], index));
  }

  dispose(): void {
    this.disposed = true;
    liveSandboxes.delete(this.ref);
    this.release();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** The engine was retired: drop every reference into it without calling it again. */
  forgetEngine(): void {
    this.state = undefined;
  }

  private runBatch(state: State, requests: readonly EvaluationRequest[], offset: number): EvaluationResult[] {
    const items = requests.map(({ id, path, valueExists, value }) =>
      valueExists ? [id, path, true, value] : [id, path, false],
    );
    const base = state.progress?.read() ?? 0;
    let text: string;
    try {
      text = this.call(state, state.helpers.runBatch, [JSON.stringify(items)]);
    } catch (error) {
      if (error instanceof EvaluationError) {
        // The counter says how far the batch got before the engine stopped it.
        const done = state.progress ? this.progressAtReturn - base : 1;
        error.index = offset + Math.max(0, Math.min(requests.length - 1, done - 1));
      }
      throw error;
    }
    const parts = text.split(RESULT_SEPARATOR);
    const results: EvaluationResult[] = [];
    for (const part of parts) {
      if (part.startsWith(ERROR_MARK)) {
        const error = this.userError(part.slice(1));
        error.index = offset + results.length;
        throw error;
      }
      results.push(part === "" || part === "null" ? REMOVE : { remove: false, value: JSON.parse(part) });
    }
    return results;
  }

  private ready(): State {
    if (this.disposed) throw new Error("the expression sandbox was disposed");
    if (this.state && isCurrentGeneration(this.state.engine.generation)) return this.state;
    this.state = undefined;
    this.state = this.build();
    return this.state;
  }

  private build(): State {
    let engine: Engine;
    try {
      engine = currentEngine();
    } catch (error) {
      if (error instanceof EngineUnavailableError) throw new EvaluationError(error.message, true);
      throw error;
    }
    try {
      this.arm(engine, SETUP_BUDGET_MS);
      const realm = createRealm(engine, {
        limits: this.limits,
        shouldInterrupt: () => this.shouldInterrupt(),
        dns: () => this.dns,
      });
      const { context, helpers, progressBuffer } = realm;
      const state: State = {
        engine,
        context,
        helpers,
        progressBuffer,
        progress: undefined,
        interruptCounter: undefined,
        sentInputs: ["null", "null", "null"],
      };
      state.progress = this.locateProgress(state, realm.progressMagic);
      state.interruptCounter = locateInterruptCounter(
        engine.memory,
        (context as unknown as { ctx?: { value?: unknown } }).ctx?.value,
        {
          spin: (n) => void this.call(state, state.helpers.spin, [n]),
          handlerCalls: () => this.interruptCalls,
        },
      );
      for (const expression of this.expressions) this.compileInto(state, expression);
      return state;
    } catch (error) {
      if (error instanceof ExpressionSyntaxError) throw error;
      discardEngine(engine.generation);
      throw new EvaluationError(`the expression engine failed to start: ${(error as Error)?.message}`, true);
    }
  }

  /** Finds the progress counter in memory and proves it by writing through the sandbox (see progress.ts). */
  private locateProgress(state: State, magic: Uint8Array): WasmInt32 | undefined {
    for (const address of findMagic(state.engine.memory, magic)) {
      const view = new WasmInt32(state.engine.memory, address);
      const marks = [0x5a5a1234, 0];
      if (marks.every((mark) => this.call(state, state.helpers.probe, [mark]) === "" && view.read() === mark))
        return view;
    }
    return undefined;
  }

  private compileInto(state: State, expression: Expression): void {
    const { context } = state;
    this.arm(state.engine, SETUP_BUDGET_MS);
    const result = context.evalCode(expression.program, `${expression.label}.js`, { type: "global", strict: true });
    if (result.error) {
      const message = this.errorText(context, result.error);
      result.error.dispose();
      throw new ExpressionSyntaxError(`syntax error: ${message.replace(/^SyntaxError: /, "")}`);
    }
    const use = context.newNumber(CONTEXT_USE[expression.contextUse]);
    context.unwrapResult(context.callFunction(state.helpers.register, context.undefined, result.value, use)).dispose();
    use.dispose();
    result.value.dispose();
  }

  private flushInputs(state: State): void {
    for (let slot = 0; slot < this.inputs.length; slot++) {
      const text = this.inputs[slot];
      if (state.sentInputs[slot] === text) continue;
      if (this.call(state, state.helpers.setInput, [slot, text]) !== "") {
        throw new EvaluationError("could not pass the context to the sandbox", true);
      }
      state.sentInputs[slot] = text;
    }
  }

  private arm(engine: Engine, budgetMs: number): void {
    this.stopReason = undefined;
    this.startBudget(budgetMs);
    this.heapCeiling = engine.memory.buffer.byteLength + this.limits.memoryBytes;
    this.seenProgress = this.state?.progress?.read() ?? 0;
    // Check at the very first poll point of the call; the handler then keeps the intervals short.
    this.state?.interruptCounter?.write(1);
  }

  private startBudget(budgetMs: number): void {
    this.budgetMs = budgetMs;
    this.lastCheck = performance.now();
    this.cpuStart = cpuClock.atMost(this.lastCheck, budgetMs * READING_AGE_SHARE);
    this.deadline = this.lastCheck + budgetMs;
  }

  /** Past the wall-clock deadline: true when the CPU budget is spent too, else the deadline moves by what is left. */
  private outOfTime(now: number): boolean {
    const left = this.budgetMs - (cpuClock.now(now) - this.cpuStart);
    if (left <= 0) return true;
    this.deadline = now + left;
    return false;
  }

  private heapGrewPastBudget(engine: Engine): boolean {
    return engine.memory.buffer.byteLength > this.heapCeiling;
  }

  private shouldInterrupt(): boolean {
    this.interruptCalls++;
    const state = this.state;
    const now = performance.now();
    // QuickJS has just reset its countdown to 10,000: shorten it, to 1 when poll points are slow (native work).
    state?.interruptCounter?.write(now - this.lastCheck > SLOW_INTERVAL_MS ? 1 : CHECK_EVERY);
    this.lastCheck = now;
    const progress = state?.progress?.read();
    if (state && progress !== undefined && progress !== this.seenProgress) {
      // The next evaluation of the batch started: its budgets start now.
      this.seenProgress = progress;
      this.startBudget(this.limits.cpuTimeMs);
      this.heapCeiling = state.engine.memory.buffer.byteLength + this.limits.memoryBytes;
    }
    if (now > this.deadline && this.outOfTime(now)) this.stopReason = "cpu";
    else if (state && this.heapGrewPastBudget(state.engine)) this.stopReason = "memory";
    return this.stopReason !== undefined;
  }

  /** Calls into the sandbox with the limits armed; returns the string the function returned. */
  private call(state: State, fn: QuickJSHandle, args: (string | number)[]): string {
    const { context, engine } = state;
    this.arm(engine, this.limits.cpuTimeMs);
    let result: ReturnType<QuickJSContext["callFunction"]>;
    try {
      const handles = args.map((arg) => (typeof arg === "string" ? context.newString(arg) : context.newNumber(arg)));
      result = context.callFunction(fn, context.undefined, ...handles);
      this.progressAtReturn = state.progress?.read() ?? 0;
      for (const handle of handles) handle.dispose();
    } catch (error) {
      // Not an exception inside QuickJS: the host failed while QuickJS ran (typically its stack). Retire the engine.
      this.state = undefined;
      discardEngine(engine.generation);
      throw new EvaluationError(`the expression engine failed and was restarted (${(error as Error)?.message})`, true);
    }
    if (result.error) {
      // Only engine errors escape the runner: interrupts, or running out of memory while reporting another error.
      const reason = this.stopReason;
      const grew = this.heapGrewPastBudget(engine);
      this.arm(engine, this.limits.cpuTimeMs);
      const message = this.errorText(context, result.error);
      result.error.dispose();
      throw this.limitError(reason, message, grew);
    }
    const text = context.typeof(result.value) === "string" ? context.getString(result.value) : "";
    result.value.dispose();
    return text;
  }

  private errorText(context: QuickJSContext, error: QuickJSHandle): string {
    try {
      if (context.typeof(error) !== "object") return `uncaught exception: ${context.dump(error)}`;
      const [name, message] = ["name", "message"].map((key) => {
        const handle = context.getProp(error, key);
        const text = context.typeof(handle) === "string" ? context.getString(handle) : "";
        handle.dispose();
        return text;
      });
      return name ? `${name}: ${message}` : message || "uncaught exception";
    } catch {
      return "uncaught exception";
    }
  }

  /** An error the expression raised (caught by the runner), unless it is really a limit. */
  private userError(message: string): EvaluationError {
    if (/^InternalError: (out of memory|stack overflow)/.test(message)) {
      return this.limitError(undefined, message, this.state ? this.heapGrewPastBudget(this.state.engine) : false);
    }
    return new EvaluationError(message);
  }

  /** Resets the sandbox (and retires the engine if the heap grew past the budget) and describes the limit. */
  private limitError(reason: "cpu" | "memory" | undefined, message: string, heapGrew: boolean): EvaluationError {
    const engine = this.state?.engine;
    this.release();
    // WebAssembly memory never shrinks: retiring the engine is the only way to give the memory back.
    if (engine && heapGrew) discardEngine(engine.generation, "memory");
    const mib = Math.round((this.limits.memoryBytes / 1024 / 1024) * 100) / 100;
    if (reason === "cpu") {
      return new EvaluationError(`the expression exceeded the CPU time limit of ${this.limits.cpuTimeMs} ms`, true);
    }
    if (reason === "memory" || /out of memory/.test(message)) {
      return new EvaluationError(`the expression exceeded the memory limit of ${mib} MiB`, true);
    }
    if (/stack overflow/.test(message)) {
      return new EvaluationError("the expression exceeded the maximum stack depth (too much recursion)", true);
    }
    return new EvaluationError(`the expression engine stopped the evaluation (${message})`, true);
  }

  private release(): void {
    const state = this.state;
    this.state = undefined;
    if (!state || !isCurrentGeneration(state.engine.generation)) return;
    try {
      for (const handle of [...Object.values(state.helpers), state.progressBuffer]) handle.dispose();
      state.context.dispose(); // also disposes the runtime it owns
    } catch {
      discardEngine(state.engine.generation);
    }
  }
}
