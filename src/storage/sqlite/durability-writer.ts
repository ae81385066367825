// Child process for the kill -9 durability test: writes keys from several concurrent loops and prints each key
// once its write is acknowledged. Usage: node durability-writer.ts <db path> <FULL|NORMAL|FULL-thread-pool>

import { openSqliteStore } from "./sqlite-store.ts";

const [path, mode] = process.argv.slice(2);
const store = await openSqliteStore({
  path,
  synchronous: mode === "NORMAL" ? "NORMAL" : "FULL",
  fsync: mode === "FULL-thread-pool" ? "thread-pool" : "commit",
});
let next = 0;

async function writer(): Promise<void> {
  for (;;) {
    const key = `/durable/${next++}`;
    await store.create(key, JSON.stringify({ key, padding: "x".repeat(200) }));
    process.stdout.write(`${key}\n`);
  }
}

process.stdout.write("ready\n");
await Promise.all(Array.from({ length: 8 }, writer));
