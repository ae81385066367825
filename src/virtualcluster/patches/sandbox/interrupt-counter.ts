import type { WasmMemory } from "./engine.ts";
import { WasmInt32 } from "./wasm-int32.ts";

// QuickJS calls the interrupt handler only every 10,000 "poll points" (bytecode function calls and loop back-edges);
// between two calls native built-ins run unchecked, so a loop whose body is one slow native call could outlive its
// deadline by minutes. The countdown lives in the JSContext (`interrupt_counter`), which QuickJS resets to 10,000
// right before it calls the handler, so the handler can set it lower for the next interval.
//
// Its offset inside JSContext is not part of any API, so it is found at run time: run a loop of known length and
// look for the one 32-bit field of the context that counted down by about that much, then prove it by setting it to
// 1 and watching the handler get called at once. If anything does not fit, the sandbox runs without it.

/** Bytes of the JSContext structure searched. */
const SEARCH_BYTES = 1024;
const INIT = 10_000;

export interface CounterProbe {
  /** Runs `n` loop iterations inside the sandbox. */
  spin(n: number): void;
  /** Number of interrupt handler calls so far. */
  handlerCalls(): number;
}

function snapshot(memory: WasmMemory, pointer: number): Int32Array {
  return new Int32Array(memory.buffer.slice(pointer, pointer + SEARCH_BYTES));
}

/** Finds `ctx->interrupt_counter` of the context at `contextPointer`, or undefined. */
export function locateInterruptCounter(
  memory: WasmMemory,
  contextPointer: unknown,
  probe: CounterProbe,
): WasmInt32 | undefined {
  if (typeof contextPointer !== "number" || contextPointer <= 0 || contextPointer % 4 !== 0) return undefined;
  if (contextPointer + SEARCH_BYTES > memory.buffer.byteLength) return undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = snapshot(memory, contextPointer);
    probe.spin(300);
    const after = snapshot(memory, contextPointer);
    for (let index = 0; index < before.length; index++) {
      const drop = before[index] - after[index];
      if (before[index] > INIT || before[index] <= 0 || drop < 300 || drop > 1500) continue;
      const candidate = new WasmInt32(memory, contextPointer + index * 4);
      // Left alone, a short loop must not reach the handler; set to 1, it must at once, and QuickJS resets it.
      candidate.write(INIT);
      const quiet = probe.handlerCalls();
      probe.spin(20);
      if (probe.handlerCalls() !== quiet) continue;
      candidate.write(1);
      const loud = probe.handlerCalls();
      probe.spin(20);
      const value = candidate.read();
      if (probe.handlerCalls() > loud && value > INIT - 200 && value <= INIT) return candidate;
    }
  }
  return undefined;
}
