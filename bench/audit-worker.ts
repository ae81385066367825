// The audit worker's CPU per event line, step by step (issue 19): the lines of GETs of one user, as event.ts writes
// them at Metadata or RequestResponse, in 1 MiB batches as the audit pipe hands them over, through the steps the
// worker runs on a batch: decoding it into lines, reading each line's indexed fields, inserting the rows into the
// embedded datastore (SQLite, one transaction per 5,000 rows, the writer's batch), and appending the bytes to the
// file. It runs in this process, so each step's CPU is measured alone: "thread" is this thread's CPU time (what
// the worker thread pays), "process" adds the threads that work for it (libuv's pool doing the file writes, V8's
// helpers). A GET logs two lines (RequestReceived and ResponseComplete).
//
//   node bench/audit-worker.ts [--requests 20000] [--level RequestResponse|Metadata] [--rounds 3]

import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { batchLines } from "../src/audit/batch-lines.ts";
import { DatastoreWriter } from "../src/audit/datastore/datastore-writer.ts";
import { auditEventFields } from "../src/audit/datastore/event-fields.ts";
import { SqliteAuditStore } from "../src/audit/datastore/sqlite-audit-store.ts";
import { auditEventLine } from "../src/audit/event.ts";
import { RotatingFileSink } from "../src/audit/rotating-file-sink.ts";
import type { AuditCompletion, AuditLevel } from "../src/audit/types.ts";
import { timeOrderedUuid } from "../src/utils/time-ordered-uuid.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    level: { type: "string", default: "RequestResponse" },
    rounds: { type: "string", default: "3" },
  },
});
const requests = Number(values.requests);
const level = values.level as AuditLevel;
const BATCH_BYTES = 1024 * 1024;

/** A user GET's answer as the registry encodes it (the bench user of bench/lib/api.ts). */
const USER_JSON = JSON.stringify({
  apiVersion: "management.platform.sh/v1",
  kind: "User",
  metadata: {
    resourceVersion: "11",
    name: "bench-get",
    labels: { "bench.platform.sh/kind": "load" },
    uid: "f02f5149-8909-4e92-9be7-e802231e3b11",
    creationTimestamp: "2026-11-25T21:18:36Z",
    generation: 1,
    managedFields: [
      {
        manager: "unknown",
        operation: "Update",
        apiVersion: "management.platform.sh/v1",
        time: "2026-11-25T21:18:36Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:bench.platform.sh/kind": {} } }, "f:spec": {} },
      },
    ],
  },
  spec: {
    displayName: "Bench User",
    username: "bench-get",
    email: "bench.user@example.com",
    groups: ["developers", "operators"],
    subject: "bench-get",
  },
});
const USER = {
  name: "admin",
  uid: "6ac0b5dd-df4b-4288-b4fd-f4c884571aa9",
  groups: ["system:authenticated"],
  extra: {
    "management.platform.sh/access-key": ["admin-bootstrap"],
    "management.platform.sh/access-key-type": ["User"],
  },
};

/** The batches the pipe would hand over for `requests` GETs, 1 ms apart every 20 requests. */
function batches(): Buffer[] {
  const out: Buffer[] = [];
  let batch = Buffer.alloc(BATCH_BYTES);
  let used = 0;
  const add = (line: string) => {
    if (used + Buffer.byteLength(line) + 1 > BATCH_BYTES) {
      out.push(batch.subarray(0, used));
      batch = Buffer.alloc(BATCH_BYTES);
      used = 0;
    }
    used += batch.write(line, used);
    batch[used++] = 10;
  };
  let now = Date.parse("2026-11-25T12:00:00Z");
  for (let i = 0; i < requests; i++) {
    if (i % 20 === 0) now++;
    const request: AuditCompletion = {
      id: timeOrderedUuid(now),
      method: "GET",
      requestUri: "/apis/management.platform.sh/v1/users/bench-get",
      requestInfo: {
        resourceRequest: true,
        verb: "get",
        path: "/apis/management.platform.sh/v1/users/bench-get",
        group: "management.platform.sh",
        version: "v1",
        namespace: "",
        resource: "users",
        name: "bench-get",
        subresource: "",
      },
      user: USER,
      sourceIp: "127.0.0.1",
      receivedAt: new Date(now),
      code: 200,
      responseJson: USER_JSON,
    };
    add(auditEventLine("RequestReceived", level, request, undefined, new Date(now)));
    add(auditEventLine("ResponseComplete", level, request, request, new Date(now)));
  }
  if (used > 0) out.push(batch.subarray(0, used));
  return out;
}

const threadCpu = () => {
  const usage = process.threadCpuUsage();
  return usage.user + usage.system;
};
const processCpu = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

interface Step {
  name: string;
  /**
   * Runs the step over every batch; resolves when its work (also in other threads) is done. A step that prepares its
   * input first calls `start` once it is ready: the measurement starts there.
   */
  run(input: Buffer[], dir: string, start: () => void): Promise<void>;
}

const decode = batchLines;

const steps: Step[] = [
  {
    name: "decode the batch into lines",
    async run(input) {
      for (const bytes of input) decode(bytes);
    },
  },
  {
    name: "read the indexed fields of each line",
    async run(input) {
      for (const bytes of input) for (const line of decode(bytes)) auditEventFields(line, 0);
    },
  },
  {
    name: "insert the rows into SQLite (5,000 a transaction, as the writer batches)",
    async run(input, dir, start) {
      const rows = input.flatMap((bytes) =>
        decode(bytes).map((line) => ({ ...auditEventFields(line, 0), instance: "", line })),
      );
      const store = new SqliteAuditStore(join(dir, "insert.db"));
      start(); // only the inserts count: the rows were prepared above
      for (let i = 0; i < rows.length; i += 5000) await store.append(rows.slice(i, i + 5000));
      await store.close();
    },
  },
  {
    name: "append the bytes to the file",
    async run(input, dir) {
      const sink = new RotatingFileSink({
        path: join(dir, "audit.log"),
        maxSizeBytes: 1024 * 1024 * 1024,
        maxBackups: 0,
        maxAgeDays: 0,
        compress: false,
      });
      for (const bytes of input) sink.writeLines(bytes);
      await sink.close();
    },
  },
  {
    name: "the whole worker path (all of the above, as the worker runs it)",
    async run(input, dir) {
      const store = new SqliteAuditStore(join(dir, "worker.db"));
      const writer = new DatastoreWriter({ store });
      const sink = new RotatingFileSink({
        path: join(dir, "worker.log"),
        maxSizeBytes: 1024 * 1024 * 1024,
        maxBackups: 0,
        maxAgeDays: 0,
        compress: false,
      });
      for (const bytes of input) {
        writer.add(decode(bytes), "");
        sink.writeLines(bytes);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await writer.flush();
      await sink.close();
      await writer.close();
      await store.close();
    },
  },
];

const input = batches();
const lines = requests * 2;
const bytes = input.reduce((sum, batch) => sum + batch.length, 0);
console.log(
  `Audit worker CPU per event line — ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "?"}; ${requests} GETs ` +
    `at ${level} = ${lines} lines of ${Math.round(bytes / lines)} B on average, ${input.length} batches; ${values.rounds} rounds\n`,
);
const samples = new Map<string, { thread: number[]; process: number[] }>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const step of steps) {
    const dir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-worker-"));
    let from = { thread: threadCpu(), process: processCpu() };
    await step.run(input, dir, () => {
      from = { thread: threadCpu(), process: processCpu() };
    });
    const usedThread = threadCpu() - from.thread;
    const usedProcess = processCpu() - from.process;
    await rm(dir, { recursive: true, force: true });
    const sample = samples.get(step.name) ?? { thread: [], process: [] };
    sample.thread.push(usedThread / lines);
    sample.process.push(usedProcess / lines);
    samples.set(step.name, sample);
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log("| step | thread µs per line | process µs per line | process µs per GET (2 lines) |");
console.log("|---|---|---|---|");
for (const [name, sample] of samples) {
  const perLine = median(sample.process);
  console.log(
    `| ${name} | ${median(sample.thread).toFixed(2)} | ${perLine.toFixed(2)} | ${(perLine * 2).toFixed(1)} |`,
  );
}
