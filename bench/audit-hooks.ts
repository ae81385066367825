// The request thread's CPU for the audit hooks of one request (issues 14 and 19), without HTTP: the records the
// pipeline builds (src/http/audit-records.ts) for a GET of one user and a CREATE of one, passed through a real
// AuditLogger's hooks (policy, event lines, hand-over to the worker) with its file and datastore on. The audit
// worker runs in its own thread and is not counted (bench/audit-worker.ts measures it). Measured as this thread's
// CPU time, so it hardly depends on what else the machine runs. A/B: each tree's modules are loaded in turn and
// rounds interleave the trees.
//
//   node bench/audit-hooks.ts [--trees /path/a,/path/b] [--requests 100000] [--rounds 5]

import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

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

const USER = {
  name: "admin",
  uid: "6ac0b5dd-df4b-4288-b4fd-f4c884571aa9",
  groups: ["system:authenticated"],
  extra: {
    "management.platform.sh/access-key": ["admin-bootstrap"],
    "management.platform.sh/access-key-type": ["User"],
  },
};
const USERS = "/apis/management.platform.sh/v1/users";
const object = (name: string, resourceVersion: string) =>
  JSON.stringify({
    apiVersion: "management.platform.sh/v1",
    kind: "User",
    metadata: {
      resourceVersion,
      name,
      labels: { "bench.platform.sh/kind": "load" },
      uid: "f02f5149-8909-4e92-9be7-e802231e3b11",
      creationTimestamp: "2026-11-25T21:18:36Z",
      generation: 1,
    },
    spec: { displayName: "Bench User", username: name, email: "bench.user@example.com", groups: ["developers"] },
  });
const GET_ANSWER = object("bench-get", "11");
const CREATE_BODY = Buffer.from(object("cpu-x7k2q", "0"));

type Kind = "GET" | "CREATE";

/** CPU µs of this thread per request for `requests` requests of `kind` through `tree`'s hooks at `level`. */
async function measure(tree: Tree, kind: Kind, level: number, dir: string): Promise<number> {
  const { logger, records, state, info, encoded, uuid } = tree.modules;
  const settings = { audit: { enabled: true, level, path: join(dir, "audit.log"), maxSize: 100, maxBackups: 1 } };
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
  const path = kind === "GET" ? `${USERS}/bench-get` : USERS;
  const one = () => {
    const request = state.newRequestState(raw, path, uuid.timeOrderedUuid());
    request.info = info.parseRequestInfo(raw.method ?? "", path);
    request.user = USER;
    hooks.onRequestReceived(records.receivedRequest(request));
    if (kind === "CREATE") {
      request.body = CREATE_BODY;
      request.auditPrepared = hooks.onRequestBody(records.bodyReadRequest(request));
    }
    request.responseObject = new encoded.EncodedJson(kind === "GET" ? GET_ANSWER : object("cpu-x7k2q", "12"));
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
  await audit.close();
  return (used.user + used.system) / requests;
}

const cases: { kind: Kind; level: number; label: string }[] = [
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
for (let round = 0; round < Number(values.rounds); round++) {
  for (const tree of round % 2 ? [...loaded].reverse() : loaded) {
    for (const { kind, level, label } of cases) {
      const dir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-hooks-"));
      const us = await measure(tree, kind, level, dir);
      await rm(dir, { recursive: true, force: true });
      const key = `${tree.path}|${label}`;
      samples.set(key, [...(samples.get(key) ?? []), us]);
    }
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`| request, level | ${trees.map((tree) => `${tree}: µs (runs)`).join(" | ")} |`);
console.log(`|---|${trees.map(() => "---").join("|")}|`);
for (const { label } of cases) {
  const cells = trees.map((tree) => {
    const list = samples.get(`${tree}|${label}`) ?? [];
    return `${median(list).toFixed(2)} (${list.map((v) => v.toFixed(1)).join(", ")})`;
  });
  console.log(`| ${label} | ${cells.join(" | ")} |`);
}
