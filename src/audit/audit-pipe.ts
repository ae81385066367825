// The main thread's end of the audit worker: event lines are gathered into a batch and handed to the worker every
// few milliseconds (or sooner when the batch is large), so the request path only appends a string to an array.
// The worker starts when there is something for it (a file to write or a call) and is restarted with the
// current settings if it dies.

import { Worker } from "node:worker_threads";
import type { FromWorker, ToWorker, WorkerCall, WorkerConfig } from "./audit-worker-protocol.ts";

/** How long lines wait to be handed over: short enough for tests and tail -f, long enough to batch under load. */
const BATCH_DELAY_MS = 25;
const BATCH_LINES = 512;

const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./audit-worker.ts" : "./audit-worker.js",
  import.meta.url,
);

export interface AuditPipeOptions {
  /** Everything the worker reports (failures, drops, counts). */
  onMessage: (message: Exclude<FromWorker, { type: "reply" }>) => void;
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
  /** Lines waiting, each ending in a newline: one string crosses to the worker far cheaper than many. */
  private batch = "";
  private batchLines = 0;
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
    this.batch += line;
    this.batch += "\n";
    if (++this.batchLines >= BATCH_LINES) this.send();
    else if (!this.timer) {
      this.timer = setTimeout(this.sendBatch, BATCH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Event lines of a virtual cluster: to the datastore only, tagged with the instance. */
  forward(lines: string[], instance: string): void {
    if (lines.length > 0) this.post({ type: "events", text: `${lines.join("\n")}\n`, toFile: false, instance });
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

  private send(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.batchLines === 0) return;
    const text = this.batch;
    this.batch = "";
    this.batchLines = 0;
    this.options.tap?.(text.slice(0, -1).split("\n"));
    if (this.worker || this.config?.file || this.config?.datastore) {
      this.post({ type: "events", text, toFile: true, instance: "" });
    }
  }

  private post(message: ToWorker): void {
    (this.worker ?? this.start()).postMessage(message);
  }

  private start(): Worker {
    const worker = new Worker(WORKER_URL, { workerData: { auditWorker: true } });
    worker.unref();
    worker.on("message", (message: FromWorker) => {
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
