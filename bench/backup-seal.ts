// What authenticating a backup costs (issue 30 item 7), against taking the snapshot itself, in the same run on the
// same store: `platform backup` adds the seal (an HMAC-SHA256 over every row and the schema), `platform restore`
// adds its check. A store of N users of about 1 KiB each (default 50,000, about 50 MiB), five rounds, medians.
//
//   node bench/backup-seal.ts [objects]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspectSnapshot, snapshotStoreFile } from "../src/storage/sqlite/snapshot.ts";
import { readSnapshotSeal, removeSeal, sealMatches, sealSnapshot } from "../src/storage/sqlite/snapshot-seal.ts";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";

const objects = Number(process.argv[2] ?? 50_000);
const ROUNDS = 5;
const dir = mkdtempSync(join(tmpdir(), "backup-seal-bench-"));
try {
  const path = join(dir, "store.db");
  const store = await openSqliteStore({ path });
  const value = JSON.stringify({
    apiVersion: "management.platform.sh/v1",
    kind: "User",
    metadata: { name: "user" },
    spec: { description: "d".repeat(900) },
  });
  for (let i = 0; i < objects; i += 500) {
    const batch = Math.min(500, objects - i);
    await Promise.all(
      Array.from({ length: batch }, (_, j) => store.create(`/management.platform.sh/users//u${i + j}`, value)),
    );
  }
  await store.close();

  const key = { id: "kbench0000000", secret: new Uint8Array(32).fill(1) };
  const times: Record<"snapshot" | "inspect" | "seal" | "check", number[]> = {
    snapshot: [],
    inspect: [],
    seal: [],
    check: [],
  };
  const timed = async (into: number[], work: () => unknown) => {
    const started = performance.now();
    await work();
    into.push(performance.now() - started);
  };
  for (let round = 0; round < ROUNDS; round++) {
    const file = join(dir, `snapshot-${round}.db`);
    await timed(times.snapshot, () => snapshotStoreFile(path, file));
    await timed(times.inspect, () => inspectSnapshot(file));
    await timed(times.seal, () => sealSnapshot(file, key));
    await timed(times.check, () => {
      const seal = readSnapshotSeal(file);
      if (!seal || !sealMatches(file, seal, key)) throw new Error("the seal does not match");
      removeSeal(file);
    });
    rmSync(file);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const snapshot = median(times.snapshot);
  console.log(`${objects} objects, ${ROUNDS} rounds, medians (ratio to taking the snapshot):`);
  for (const [step, values] of Object.entries(times)) {
    console.log(
      `  ${step.padEnd(8)} ${median(values).toFixed(0).padStart(6)} ms  ${(median(values) / snapshot).toFixed(2)}x`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
