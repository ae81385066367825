// The main thread's end of the audit worker: event lines are written as UTF-8 into a batch buffer, which is handed
// to the worker every few milliseconds (or once full) by transfer, without a copy; the worker writes those bytes
// to the file as they are and hands the buffer back for reuse. The request path encodes a line into memory and
// nothing more: serializing a batch string for postMessage cost more than building the lines. The worker starts
// when there is something for it (a file to write or a call) and is restarted with the current settings if it
// dies.

import { Worker } from "node:worker_threads";
import type { FromWorker, ToWorker, WorkerCall, WorkerConfig } from "./audit-worker-protocol.ts";
import { type LinePiece, pieceText } from "./event.ts";

/** How long lines wait to be handed over: short enough for tests and tail -f, long enough to batch under load. */
const BATCH_DELAY_MS = 25;
/** Size of a batch buffer; a batch is handed over when the next line might not fit. */
export const BATCH_BYTES = 1024 * 1024;
/** Batch buffers kept for reuse (the worker hands each back once its lines are on disk). */
const POOLED_BUFFERS = 8;

const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./audit-worker.ts" : "./audit-worker.js",
  import.meta.url,
);

export interface AuditPipeOptions {
  /** Called before each batch is handed over: the caller writes the lines it holds back. */
  flush?: () => void;
  /** Everything the worker reports (failures, drops, counts). */
  onMessage: (message: Exclude<FromWorker, { type: "reply" | "buffer" }>) => void;
  /** The worker died; it is restarted on the next batch or call. */
  onWorkerError: (error: Error) => void;
  /** Sees every batch of the platform's own lines as it is handed over (a virtual cluster forwards them). */
  tap?: (lines: readonly string[]) => void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class AuditPipe {
  private readonly options: AuditPipeOptions;
  private worker: Worker | undefined;
  private config: WorkerConfig | undefined;
  /** Lines waiting, as UTF-8, each ending in a newline: bytes [0, used) of `batch`. */
  private batch: Buffer<ArrayBuffer> | undefined;
  private used = 0;
  /** The lines of the batch as strings, kept only for a tap. */
  private tapped: string[] = [];
  private readonly pool: ArrayBuffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly sendBatch = () => this.send();

  constructor(options: AuditPipeOptions) {
    this.options = options;
  }

  /** New settings; starts the worker when there is a file to write. */
  configure(config: WorkerConfig): void {
    this.config = config;
    if (this.worker) this.post({ type: "configure", config });
    else if (config.file) this.start();
  }

  /** One of the platform's own event lines (file and datastore). */
  write(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: the exact size is only needed when it might not fit.
    let batch = this.batch;
    if (batch === undefined || this.used + line.length * 3 + 1 > batch.length)
      batch = this.room(Buffer.byteLength(line) + 1);
    this.used += batch.write(line, this.used);
    batch[this.used++] = 10;
    if (this.options.tap) this.tapped.push(line);
    this.schedule();
  }

  /** Hands the batch over in a moment (lines written meanwhile go with it). */
  schedule(): void {
    if (!this.timer) {
      this.timer = setTimeout(this.sendBatch, BATCH_DELAY_MS);
      this.timer.unref();
    }
  }

  /**
   * One of the platform's own event lines as pieces (`pieces[0, count)` joined is the line): bytes are copied into
   * the batch and text is encoded there, so the line is never built as one string.
   */
  writePieces(pieces: readonly LinePiece[], count: number): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: the exact size is only needed when it might not fit.
    let bound = 1;
    for (let i = 0; i < count; i++) {
      const piece = pieces[i];
      bound += typeof piece === "string" ? piece.length * 3 : piece.length;
    }
    let batch = this.batch;
    if (batch === undefined || this.used + bound > batch.length) {
      let bytes = 1;
      for (let i = 0; i < count; i++) {
        const piece = pieces[i];
        bytes += typeof piece === "string" ? Buffer.byteLength(piece) : piece.length;
      }
      batch = this.room(bytes);
    }
    let used = this.used;
    for (let i = 0; i < count; i++) {
      const piece = pieces[i];
      if (typeof piece === "string") used += batch.write(piece, used);
      else {
        batch.set(piece, used);
        used += piece.length;
      }
    }
    batch[used++] = 10;
    this.used = used;
    if (this.options.tap) {
      let line = "";
      for (let i = 0; i < count; i++) line += pieceText(pieces[i]);
      this.tapped.push(line);
    }
    this.schedule();
  }

  /** Event lines of a virtual cluster: to the datastore only, tagged with the instance. */
  forward(lines: string[], instance: string): void {
    if (lines.length === 0) return;
    const text = `${lines.join("\n")}\n`;
    const bytes = Buffer.from(new ArrayBuffer(Buffer.byteLength(text)));
    bytes.write(text);
    this.post({ type: "events", bytes: bytes.buffer, length: bytes.length, toFile: false, instance });
  }

  /** Hands over what is batched, then asks the worker (starting it if need be). */
  call<T>(call: WorkerCall): Promise<T> {
    this.send();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.post({ type: "call", id, call });
    });
  }

  /** Writes what is batched, closes the file and the datastore, and ends the worker. */
  async close(): Promise<void> {
    this.send();
    if (!this.worker) return;
    await this.call({ method: "close" }).catch(() => undefined);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** A batch with room for `bytes` more: the current one if they fit after all, else a new one. */
  private room(bytes: number): Buffer<ArrayBuffer> {
    if (this.batch !== undefined && this.used + bytes <= this.batch.length) return this.batch;
    this.send();
    // Kept when there was no one to send it to (audit just turned off): empty now.
    if (this.batch !== undefined && bytes <= this.batch.length) return this.batch;
    const size = Math.max(bytes, BATCH_BYTES);
    const buffer = (size === BATCH_BYTES && this.pool.pop()) || new ArrayBuffer(size);
    this.batch = Buffer.from(buffer);
    return this.batch;
  }

  private send(): void {
    this.options.flush?.();
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.batch;
    if (batch === undefined || this.used === 0) return;
    const length = this.used;
    this.used = 0;
    if (this.options.tap) {
      const lines = this.tapped;
      this.tapped = [];
      this.options.tap(lines);
    }
    if (this.worker || this.config?.file || this.config?.datastore) {
      this.batch = undefined;
      this.post({ type: "events", bytes: batch.buffer, length, toFile: true, instance: "" });
    }
  }

  /** Posts to the worker; a message with bytes hands their buffer over (it is unusable here afterwards). */
  private post(message: ToWorker): void {
    const worker = this.worker ?? this.start();
    if (message.type === "events") worker.postMessage(message, [message.bytes]);
    else worker.postMessage(message);
  }

  private reuse(buffer: ArrayBuffer): void {
    if (buffer.byteLength === BATCH_BYTES && this.pool.length < POOLED_BUFFERS) this.pool.push(buffer);
  }

  private start(): Worker {
    const worker = new Worker(WORKER_URL, { workerData: { auditWorker: true } });
    worker.unref();
    worker.on("message", (message: FromWorker) => {
      if (message.type === "buffer") {
        this.reuse(message.bytes);
        return;
      }
      if (message.type !== "reply") {
        this.options.onMessage(message);
        return;
      }
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(new Error(message.message));
    });
    worker.on("error", (error) => this.died(worker, error));
    worker.on("exit", (code) => this.died(worker, new Error(`the audit worker exited with code ${code}`)));
    this.worker = worker;
    if (this.config) worker.postMessage({ type: "configure", config: this.config } satisfies ToWorker);
    return worker;
  }

  private died(worker: Worker, error: Error): void {
    if (this.worker !== worker) return; // closed on purpose, or already replaced
    this.worker = undefined;
    this.options.onWorkerError(error);
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const call of pending) call.reject(error);
  }
}
