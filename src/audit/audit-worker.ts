// The audit worker thread: owns the audit log file and the datastore, so appending, rotating, compressing, inserting
// and searching never run on the thread that serves requests. Each batch of event lines from the main thread feeds
// both: its bytes go to the file unchanged, its lines (decoded once) to the datastore. Started by AuditPipe (audit-pipe.ts); the protocol is audit-worker-protocol.ts.

import { parentPort, workerData } from "node:worker_threads";
import type { FromWorker, ToWorker, WorkerCall, WorkerConfig } from "./audit-worker-protocol.ts";
import { batchLines } from "./batch-lines.ts";
import { AuditDatastore } from "./datastore/audit-datastore.ts";
import { RotatingFileSink } from "./rotating-file-sink.ts";

const port = parentPort;
if (!port || (workerData as { auditWorker?: boolean } | undefined)?.auditWorker !== true) {
  throw new Error("audit-worker.ts runs only as the audit log's worker thread");
}
const post = (message: FromWorker) => port.postMessage(message);

let sink: RotatingFileSink | undefined;
/** Closing of replaced sinks and datastores, which a new one of the same file waits for. */
let closing: Promise<unknown> = Promise.resolve();
let datastore: AuditDatastore | undefined;
let datastoreError: string | undefined;

function configure(config: WorkerConfig): void {
  const file = config.file;
  if (!file) stopSink();
  else if (sink?.path === file.path) sink.reconfigure(file.rotation);
  else {
    stopSink();
    sink = new RotatingFileSink({
      path: file.path,
      ...file.rotation,
      startAfter: closing,
      onFailure: (operation, error) =>
        post({ type: "file", report: { kind: "failure", operation, message: error.message } }),
      onDropped: (count) => post({ type: "file", report: { kind: "dropped", count } }),
    });
  }
  const wanted = config.datastore;
  if (datastore && (!wanted || wanted.endpoint !== datastore.endpoint)) {
    const old = datastore;
    datastore = undefined;
    closing = closing.then(() => old.close());
  }
  if (wanted && datastore) datastore.setTtl(wanted.ttlHours);
  else if (wanted) {
    try {
      datastore = new AuditDatastore({
        ...wanted,
        ...config.tuning,
        dataDir: config.dataDir,
        report: (report) => post({ type: "datastore", report }),
      });
      datastoreError = undefined;
    } catch (error) {
      datastoreError = (error as Error).message;
      post({ type: "datastore", report: { kind: "failure", message: datastoreError } });
    }
  }
}

function stopSink(): void {
  const old = sink;
  sink = undefined;
  if (old) closing = closing.then(() => old.close());
}

function store(): AuditDatastore {
  if (datastore) return datastore;
  throw new Error(`the audit datastore is not available${datastoreError ? `: ${datastoreError}` : ""}`);
}

async function answer(call: WorkerCall): Promise<unknown> {
  switch (call.method) {
    case "settle":
      await closing;
      await sink?.settled();
      await datastore?.flush();
      return undefined;
    case "search":
      return await store().search(call.query);
    case "byAuditId":
      return await store().byAuditId(call.auditID);
    case "sweep":
      return await store().sweep();
    case "close":
      stopSink();
      if (datastore) {
        const old = datastore;
        datastore = undefined;
        closing = closing.then(() => old.close());
      }
      await closing;
      return undefined;
  }
}

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "configure":
      configure(message.config);
      return;
    case "events": {
      const bytes = Buffer.from(message.bytes, 0, message.length);
      if (datastore) datastore.add(batchLines(bytes), message.instance);
      // The file gets the bytes as they came; the buffer goes back to the main thread once they are on disk.
      const release = () =>
        port.postMessage({ type: "buffer", bytes: message.bytes } satisfies FromWorker, [message.bytes]);
      if (message.toFile && sink) sink.writeLines(bytes, release);
      else release();
      post({
        type: "stats",
        fileQueuedBytes: sink?.queuedBytes() ?? 0,
        datastoreSpooled: datastore?.spooled() ?? 0,
      });
      return;
    }
    case "call":
      answer(message.call).then(
        (value) => post({ type: "reply", id: message.id, ok: true, value }),
        (error: Error) => post({ type: "reply", id: message.id, ok: false, message: error.message }),
      );
  }
});
