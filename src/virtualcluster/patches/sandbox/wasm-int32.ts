import type { WasmMemory } from "./engine.ts";

/**
 * One 32-bit integer at a fixed address of the engine's WebAssembly memory, read and written without calling into
 * QuickJS. The view is rebuilt after the memory grew (a grown memory has a new buffer).
 */
export class WasmInt32 {
  readonly address: number;
  private readonly memory: WasmMemory;
  private buffer: ArrayBuffer | undefined;
  private view: Int32Array | undefined;

  constructor(memory: WasmMemory, address: number) {
    this.memory = memory;
    this.address = address;
  }

  private current(): Int32Array {
    const buffer = this.memory.buffer;
    if (buffer !== this.buffer || !this.view) {
      this.buffer = buffer;
      this.view = new Int32Array(buffer, this.address, 1);
    }
    return this.view;
  }

  read(): number {
    return this.current()[0];
  }

  write(value: number): void {
    this.current()[0] = value;
  }
}
