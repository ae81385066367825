// Sync patch engine benchmark (issue 6). Run: node --expose-gc bench/patches.ts [--objects 10000] [--json]
//
// Measures, in one run:
//   1. applyPatches() end to end with a typical patch set (three expression patches and one wildcard) over 10,000
//      Endpoints objects: evaluations per second and the per-object latency distribution (p50, p99);
//   2. the sandbox alone (ExpressionSandbox.evaluate with a compiled expression);
//   3. baselines on the same machine and run: a raw quickjs-emscripten evalCode loop (source text parsed on every
//      evaluation) and a raw callFunction loop (one precompiled function, the least work quickjs-emscripten allows);
//   4. a fresh context per evaluation (the isolation policy we did not choose) for comparison;
//   5. memory: RSS, V8 heap and the QuickJS WebAssembly heap every 250,000 evaluations up to 1,000,000.

import { newQuickJSWASMModule, RELEASE_SYNC } from "quickjs-emscripten";
import { applyPatches } from "../src/virtualcluster/patches/apply.ts";
import { compilePatches } from "../src/virtualcluster/patches/compile.ts";
import { currentEngine, loadEngine } from "../src/virtualcluster/patches/sandbox/engine.ts";
import { checkExpression } from "../src/virtualcluster/patches/sandbox/expression-check.ts";
import { ExpressionSandbox } from "../src/virtualcluster/patches/sandbox/sandbox.ts";
import type { ApplyOptions, Patch } from "../src/virtualcluster/patches/types.ts";
import { createTranslator } from "../src/virtualcluster/translate/translator.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const OBJECTS = argument("--objects", 10_000);
const MEMORY_EVALUATIONS = argument("--memory-evaluations", 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

const PATCHES: Patch[] = [
  { path: "metadata.labels.app", expression: "value.toUpperCase()", reverseExpression: "value.toLowerCase()" },
  { path: 'metadata.annotations["example.com/owner"]', expression: "valueExists ? value : context.vcluster.name" },
  { path: "subsets[0].ports[0].name", expression: "value + '-' + context.vcluster.name" },
  { path: "subsets[*].addresses[*].hostname", expression: "value ? value + '.' + context.vcluster.namespace : value" },
];

function endpoints(index: number) {
  const address = (subset: number, n: number) => ({
    ip: `10.${subset}.${index % 250}.${n}`,
    hostname: `pod-${index}-${n}`,
  });
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: `service-${index}`,
      namespace: `team-${index % 20}`,
      labels: { app: `app-${index}`, tier: "web" },
      annotations: { "example.com/build": String(index) },
    },
    subsets: [0, 1].map((subset) => ({
      addresses: [address(subset, 1), address(subset, 2)],
      ports: [{ name: "http", port: 80 }],
    })),
  };
}
/** Evaluations one object causes: 3 single-path expressions + 4 wildcard matches. */
const EVALUATIONS_PER_OBJECT = 7;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);

const translator = createTranslator({ name: "vc", namespace: "vc-host" });
const vcluster = { name: "vc", namespace: "vc-host", config: { sync: { toHost: { endpoints: { enabled: true } } } } };
const objects = Array.from({ length: OBJECTS }, (_, index) => endpoints(index));
const set = compilePatches(PATCHES, "sync.toHost.endpoints.patches");
const optionsFor = (object: unknown): ApplyOptions => ({
  direction: "toHost",
  translator,
  context: { vcluster, hostObject: null, virtualObject: object },
});

function applyPass(latencies?: number[]): number {
  const start = performance.now();
  for (const object of objects) {
    const begin = performance.now();
    applyPatches(set, object, optionsFor(object));
    latencies?.push(performance.now() - begin);
  }
  return performance.now() - start;
}

// Correctness guard: the benchmark measures the real thing.
const sample = applyPatches(set, objects[1], optionsFor(objects[1])).object as ReturnType<typeof endpoints>;
if (sample.metadata.labels.app !== "APP-1" || sample.subsets[1].addresses[0].hostname !== "pod-1-1.vc-host") {
  throw new Error(`unexpected patch result: ${JSON.stringify(sample)}`);
}

// 1. applyPatches end to end.
applyPass(); // warm-up (JIT)
applyPass();
const latencies: number[] = [];
let applyMs = 0;
const PASSES = 5;
for (let pass = 0; pass < PASSES; pass++) applyMs += applyPass(latencies);
latencies.sort((a, b) => a - b);
const applyEvaluations = PASSES * OBJECTS * EVALUATIONS_PER_OBJECT;

// 2. The sandbox alone.
const sandbox = new ExpressionSandbox();
const upper = checkExpression("value.toUpperCase()");
const upperId = sandbox.compile(upper.program, upper.contextUse);
const SANDBOX_N = 300_000;
for (let i = 0; i < 20_000; i++) sandbox.evaluate(upperId, "metadata.labels.app", true, `app-${i}`);
let start = performance.now();
for (let i = 0; i < SANDBOX_N; i++) sandbox.evaluate(upperId, "metadata.labels.app", true, `app-${i}`);
const sandboxMs = performance.now() - start;

// 3. Raw quickjs-emscripten loops on their own module (no limits, no checks, no JSON conversion).
const raw = await newQuickJSWASMModule(RELEASE_SYNC);
const rawContext = raw.newContext();
const RAW_N = 300_000;
const evalLoop = () => {
  for (let i = 0; i < RAW_N; i++) {
    const result = rawContext.evalCode(`"app-${i}".toUpperCase()`);
    const handle = rawContext.unwrapResult(result);
    rawContext.getString(handle);
    handle.dispose();
  }
};
const rawFunction = rawContext.unwrapResult(rawContext.evalCode("(value) => value.toUpperCase()"));
const callLoop = () => {
  for (let i = 0; i < RAW_N; i++) {
    const argumentHandle = rawContext.newString(`app-${i}`);
    const handle = rawContext.unwrapResult(rawContext.callFunction(rawFunction, rawContext.undefined, argumentHandle));
    rawContext.getString(handle);
    handle.dispose();
    argumentHandle.dispose();
  }
};
evalLoop();
start = performance.now();
evalLoop();
const rawEvalMs = performance.now() - start;
callLoop();
start = performance.now();
callLoop();
const rawCallMs = performance.now() - start;

// 4. A fresh context per evaluation (realm setup and compile every time).
const FRESH_N = 300;
start = performance.now();
for (let i = 0; i < FRESH_N; i++) {
  const fresh = new ExpressionSandbox();
  const id = fresh.compile(upper.program, upper.contextUse);
  fresh.evaluate(id, "metadata.labels.app", true, `app-${i}`);
  fresh.dispose();
}
const freshMs = performance.now() - start;

// 5. Memory over a million evaluations through applyPatches.
gc();
const memory: { evaluations: number; rssMiB: number; heapMiB: number; wasmHeapMiB: number }[] = [];
const snapshot = (evaluations: number) => {
  gc();
  const usage = process.memoryUsage();
  memory.push({
    evaluations,
    rssMiB: mib(usage.rss),
    heapMiB: mib(usage.heapUsed),
    wasmHeapMiB: mib(currentEngine().memory.buffer.byteLength),
  });
};
snapshot(0);
let evaluations = 0;
let nextSnapshot = 250_000;
while (evaluations < MEMORY_EVALUATIONS) {
  for (const object of objects) {
    applyPatches(set, object, optionsFor(object));
    evaluations += EVALUATIONS_PER_OBJECT;
    if (evaluations >= nextSnapshot) {
      snapshot(evaluations);
      nextSnapshot += 250_000;
    }
    if (evaluations >= MEMORY_EVALUATIONS) break;
  }
}

const report = {
  node: process.version,
  objects: OBJECTS,
  patchSet: PATCHES.map((patch) => `${patch.path} <- ${patch.expression}`),
  evaluationsPerObject: EVALUATIONS_PER_OBJECT,
  applyPatches: {
    evaluationsPerSecond: rate(applyEvaluations, applyMs),
    objectsPerSecond: rate(PASSES * OBJECTS, applyMs),
    perObjectMs: {
      p50: Number(percentile(latencies, 50).toFixed(4)),
      p99: Number(percentile(latencies, 99).toFixed(4)),
      max: Number(latencies[latencies.length - 1].toFixed(3)),
    },
  },
  sandboxEvaluatePerSecond: rate(SANDBOX_N, sandboxMs),
  rawEvalCodePerSecond: rate(RAW_N, rawEvalMs),
  rawCallFunctionPerSecond: rate(RAW_N, rawCallMs),
  freshContextPerEvaluationPerSecond: rate(FRESH_N, freshMs),
  memory,
};

if (process.argv.includes("--json")) {
  console.log(JSON.stringify(report, null, 2));
} else {
  const a = report.applyPatches;
  console.log(`node ${report.node}, ${OBJECTS} Endpoints objects, ${EVALUATIONS_PER_OBJECT} evaluations each`);
  console.log(
    `applyPatches (typical set)     ${a.evaluationsPerSecond.toLocaleString("en")} evaluations/s, ${a.objectsPerSecond.toLocaleString("en")} objects/s`,
  );
  console.log(
    `  per object                   p50 ${a.perObjectMs.p50} ms, p99 ${a.perObjectMs.p99} ms, max ${a.perObjectMs.max} ms`,
  );
  console.log(`sandbox.evaluate alone         ${report.sandboxEvaluatePerSecond.toLocaleString("en")} evaluations/s`);
  console.log(`raw evalCode loop (baseline)   ${report.rawEvalCodePerSecond.toLocaleString("en")} evaluations/s`);
  console.log(`raw callFunction loop          ${report.rawCallFunctionPerSecond.toLocaleString("en")} evaluations/s`);
  console.log(
    `fresh context per evaluation   ${report.freshContextPerEvaluationPerSecond.toLocaleString("en")} evaluations/s`,
  );
  for (const row of memory) {
    console.log(
      `memory at ${String(row.evaluations).padStart(9)} evaluations: RSS ${row.rssMiB} MiB, V8 heap ${row.heapMiB} MiB, QuickJS heap ${row.wasmHeapMiB} MiB`,
    );
  }
}
set.dispose();
sandbox.dispose();
rawFunction.dispose();
rawContext.dispose();
