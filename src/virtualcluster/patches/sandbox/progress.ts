import { randomBytes } from "node:crypto";
import type { WasmMemory } from "./engine.ts";

// A 4-byte counter inside the sandbox that the host reads straight from WebAssembly memory, with no call into
// QuickJS: the sandbox bumps it before every evaluation of a batch and the interrupt handler watches it, so every
// evaluation gets its own CPU and memory budget although the host calls QuickJS only once per batch. (A host function
// the sandbox could call instead costs ~2.7 µs per call, more than the evaluation itself.)
//
// The counter lives in an ArrayBuffer the sandbox keeps. Its address is found once per sandbox build by filling it
// with 16 random bytes and searching the memory for them, then confirmed by writing through the sandbox and reading
// back; if that ever fails, the sandbox simply evaluates one expression per call instead.

export const MAGIC_BYTES = 16;

/** Random content for the counter's buffer, unique to one build. */
export function progressMagic(): Uint8Array {
  return new Uint8Array(randomBytes(MAGIC_BYTES));
}

/** Every 4-byte aligned address where `magic` occurs in the memory (normally one). */
export function findMagic(memory: WasmMemory, magic: Uint8Array): number[] {
  const heap = Buffer.from(memory.buffer);
  const found: number[] = [];
  for (let at = heap.indexOf(magic); at >= 0 && found.length < 8; at = heap.indexOf(magic, at + 1)) {
    if (at % 4 === 0) found.push(at);
  }
  return found;
}
