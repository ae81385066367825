// Micro-benchmark of the embedded store: durable creates from concurrent callers (synchronous FULL vs NORMAL),
// a single sequential caller, updates, get, list and count. Run: node bench/storage-sqlite.ts [keys]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../src/storage/types.ts";

const KEYS = Number(process.argv[2] ?? 50_000);
const CALLERS = 64;
const VALUE = JSON.stringify({ kind: "Pod", metadata: { name: "x" }, spec: { padding: "p".repeat(900) } }); // ~1 KiB
const dir = mkdtempSync(join(tmpdir(), "bench-storage-"));

function rate(count: number, ms: number): string {
  return `${Math.round((count / ms) * 1000).toLocaleString("en-US")}/s`;
}

async function timed(count: number, body: () => Promise<void>): Promise<string> {
  const start = performance.now();
  await body();
  return rate(count, performance.now() - start);
}

/** `callers` concurrent loops share `count` operations. */
async function concurrently(count: number, callers: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < count) await op(next++);
    }),
  );
}

const key = (i: number) => `/core/pods/ns-${i % 20}/pod-${String(i).padStart(7, "0")}`;

async function run(synchronous: "FULL" | "NORMAL"): Promise<Record<string, string>> {
  const store: KeyValueStore = await openSqliteStore({ path: join(dir, `${synchronous}.db`), synchronous });
  const results: Record<string, string> = {};
  results[`creates, ${CALLERS} callers`] = await timed(KEYS, () =>
    concurrently(KEYS, CALLERS, (i) => store.create(key(i), VALUE)),
  );
  const sequential = Math.min(KEYS, 5000);
  results["creates, 1 caller"] = await timed(sequential, () =>
    concurrently(sequential, 1, (i) => store.create(`/seq/${i}`, VALUE)),
  );
  const revisions = new Map<number, number>();
  for (let i = 0; i < KEYS; i++) revisions.set(i, (await store.get(key(i)))!.revision);
  results[`updates, ${CALLERS} callers`] = await timed(KEYS, () =>
    concurrently(KEYS, CALLERS, async (i) => store.update(key(i), VALUE, revisions.get(i)!)),
  );
  results["get (awaited loop)"] = await timed(200_000, async () => {
    for (let i = 0; i < 200_000; i++) await store.get(key((i * 7919) % KEYS));
  });
  results["list 500 of one namespace"] = await timed(500, async () => {
    for (let i = 0; i < 500; i++) await store.list({ prefix: `/core/pods/ns-${i % 20}/`, limit: 500 });
  });
  results[`list all ${KEYS} (lists/s)`] = await timed(5, async () => {
    for (let i = 0; i < 5; i++) await store.list({ prefix: "/core/pods/" });
  });
  results[`count ${KEYS} (counts/s)`] = await timed(20, async () => {
    for (let i = 0; i < 20; i++) await store.count("/core/pods/");
  });
  const watchers = Array.from({ length: 100 }, (_, i) =>
    store.watch({ prefix: `/core/pods/ns-${i % 20}/`, afterRevision: 0, onEvents: () => true, onClose: () => {} }),
  );
  results[`creates, ${CALLERS} callers, 100 watchers`] = await timed(KEYS, () =>
    concurrently(KEYS, CALLERS, (i) => store.create(`${key(i)}-watched`, VALUE)),
  );
  for (const watcher of watchers) watcher.close();
  await store.close();
  return results;
}

const full = await run("FULL");
const normal = await run("NORMAL");
rmSync(dir, { recursive: true, force: true });
console.log(`SQLite store, ${KEYS} keys, ~1 KiB values, Node ${process.version}`);
console.log("| operation | synchronous=FULL | synchronous=NORMAL |");
console.log("|---|---|---|");
for (const name of Object.keys(full)) console.log(`| ${name} | ${full[name]} | ${normal[name]} |`);
