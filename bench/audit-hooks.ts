// The request thread's CPU for the audit hooks of one request (issues 14 and 19), without HTTP: the records the
// pipeline builds (src/http/audit-records.ts) for a GET of one user and a CREATE of one, passed through a real
// AuditLogger's hooks (policy, event lines, hand-over to the worker) with its file and datastore on. The audit
// worker runs in its own thread and is not counted (bench/audit-worker.ts measures it). Measured as this thread's
// CPU time, so it hardly depends on what else the machine runs, and as bytes allocated on this thread's heap per
// request (the young generation's growth over 200 requests between two collections). A/B: each tree's modules are
// loaded in turn and rounds interleave the trees.
//
//   node bench/audit-hooks.ts [--trees /path/a,/path/b] [--requests 100000] [--rounds 5]

import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { getHeapSpaceStatistics } from "node:v8";
import { USERS_PATH } from "./lib/api.ts";
import { BENCH_CALLER, encodedUser } from "./lib/audit-fixtures.ts";

const { values } = parseArgs({
  options: {
    trees: { type: "string", default: "." },
    requests: { type: "string", default: "100000" },
    rounds: { type: "string", default: "5" },
  },
});
const requests = Number(values.requests);
const trees = values.trees.split(",").map((tree) => resolve(tree));

type Logger = typeof import("../src/audit/audit-logger.ts");
type Records = typeof import("../src/http/audit-records.ts");
type State = typeof import("../src/http/request-state.ts");
type Info = typeof import("../src/http/request-info.ts");
type Encoded = typeof import("../src/registry/encoded-json.ts");
type Uuid = typeof import("../src/utils/time-ordered-uuid.ts");

interface Tree {
  path: string;
  modules: { logger: Logger; records: Records; state: State; info: Info; encoded: Encoded; uuid: Uuid };
}

async function load(path: string): Promise<Tree> {
  const module = <T>(file: string) => import(join(path, "src", file)) as Promise<T>;
  return {
    path,
    modules: {
      logger: await module<Logger>("audit/audit-logger.ts"),
      records: await module<Records>("http/audit-records.ts"),
      state: await module<State>("http/request-state.ts"),
      info: await module<Info>("http/request-info.ts"),
      encoded: await module<Encoded>("registry/encoded-json.ts"),
      uuid: await module<Uuid>("utils/time-ordered-uuid.ts"),
    },
  };
}

const GET_ANSWER = encodedUser("bench-get", "11");
const CREATE_BODY = Buffer.from(encodedUser("cpu-x7k2q", "0"));

type Kind = "GET" | "CREATE";

/** Requests per allocation span: small enough that most spans see no collection. */
const SPAN = 200;

/** Collections on this thread so far (an allocation count is only valid over a span without one). */
let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });

/**
 * CPU µs of this thread per request for `requests` requests of `kind` through `tree`'s hooks at `level`, and the
 * bytes they allocate per request.
 */
async function measure(tree: Tree, kind: Kind, level: number, dir: string): Promise<{ us: number; bytes: number }> {
  const { logger, records, state, info, encoded, uuid } = tree.modules;
  const settings = { audit: { enabled: level > 0, level, path: join(dir, "audit.log"), maxSize: 100, maxBackups: 1 } };
  const audit = new logger.AuditLogger({
    settings: { current: () => settings, onChange: () => () => {} },
    dataDir: dir,
  });
  const hooks = audit.hooks;
  const raw = {
    method: kind === "GET" ? "GET" : "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    socket: { remoteAddress: "127.0.0.1" },
  } as unknown as Parameters<State["newRequestState"]>[0];
  const path = kind === "GET" ? `${USERS_PATH}/bench-get` : USERS_PATH;
  const one = () => {
    const request = state.newRequestState(raw, path, uuid.timeOrderedUuid());
    request.info = info.parseRequestInfo(raw.method ?? "", path);
    request.user = BENCH_CALLER;
    hooks.onRequestReceived(records.receivedRequest(request));
    if (kind === "CREATE") {
      request.body = CREATE_BODY;
      request.auditPrepared = hooks.onRequestBody(records.bodyReadRequest(request));
    }
    request.responseObject = new encoded.EncodedJson(kind === "GET" ? GET_ANSWER : encodedUser("cpu-x7k2q", "12"));
    hooks.onRequestComplete(records.completedRequest(request, kind === "GET" ? 200 : 201, 0.001));
  };
  for (let i = 0; i < 5000; i++) one(); // warm-up: JIT
  await audit.settled();
  const start = process.threadCpuUsage();
  for (let i = 0; i < requests; i++) {
    one();
    // Let the pipe hand batches over and take buffers back, as the server's event loop would.
    if (i % 256 === 255) await new Promise((done) => setImmediate(done));
  }
  const used = process.threadCpuUsage(start);
  // Allocation: the young generation's growth over a span of requests that no collection interrupted.
  const young = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_used_size ?? 0;
  // A collection in the span shrinks the growth (its entry may come late): the largest of several spans counts.
  let bytes = Number.NaN;
  for (let attempt = 0; attempt < 8; attempt++) {
    await new Promise((done) => setImmediate(done));
    const before = collections;
    const used = young();
    for (let i = 0; i < SPAN; i++) one();
    const grown = young() - used;
    await new Promise((done) => setTimeout(done, 1)); // gc entries are delivered asynchronously
    if (collections === before && grown > 0 && !(grown / SPAN <= bytes)) bytes = grown / SPAN;
  }
  await audit.close();
  return { us: (used.user + used.system) / requests, bytes };
}

const cases: { kind: Kind; level: number; label: string }[] = [
  // Audit off: what the loop costs without the hooks' work (the records are built all the same).
  { kind: "GET", level: 0, label: "GET, audit off (the loop itself)" },
  { kind: "GET", level: 1, label: "GET, Metadata" },
  { kind: "GET", level: 3, label: "GET, RequestResponse" },
  { kind: "CREATE", level: 1, label: "CREATE, Metadata" },
  { kind: "CREATE", level: 3, label: "CREATE, RequestResponse" },
];
const loaded: Tree[] = [];
for (const path of trees) loaded.push(await load(path));
console.log(
  `Audit hooks, request thread CPU per request — ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "?"}; ` +
    `${requests} requests per run, ${values.rounds} rounds; trees: ${trees.join(", ")}\n`,
);
const samples = new Map<string, number[]>();
const allocated = new Map<string, number[]>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const tree of round % 2 ? [...loaded].reverse() : loaded) {
    for (const { kind, level, label } of cases) {
      const dir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-hooks-"));
      const { us, bytes } = await measure(tree, kind, level, dir);
      await rm(dir, { recursive: true, force: true });
      const key = `${tree.path}|${label}`;
      samples.set(key, [...(samples.get(key) ?? []), us]);
      if (!Number.isNaN(bytes)) allocated.set(key, [...(allocated.get(key) ?? []), bytes]);
    }
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`| request, level | ${trees.map((tree) => `${tree}: µs (runs) | bytes allocated`).join(" | ")} |`);
console.log(`|---|${trees.map(() => "---|---").join("|")}|`);
for (const { label } of cases) {
  const cells = trees.map((tree) => {
    const list = samples.get(`${tree}|${label}`) ?? [];
    const bytes = allocated.get(`${tree}|${label}`) ?? [];
    return `${median(list).toFixed(2)} (${list.map((v) => v.toFixed(1)).join(", ")}) | ${bytes.length ? median(bytes).toFixed(0) : "-"}`;
  });
  console.log(`| ${label} | ${cells.join(" | ")} |`);
}
