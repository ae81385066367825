import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir as readAll, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { eventually } from "../utils/testing-eventually.ts";
import { BackupNames } from "./backup-names.ts";
import { BackupRecord } from "./backup-record.ts";
import { RotatingFileSink, type RotatingFileSinkOptions } from "./rotating-file-sink.ts";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "audit-sink-"));
  dirs.push(dir);
  return dir;
}
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The log's files: the live one and its backups, without the record of the backups it made. */
async function readdir(dir: string): Promise<string[]> {
  return (await readAll(dir)).filter((name) => !name.startsWith("."));
}

/** Every line in the live file and all backups (compressed ones inflated), in file order. */
async function allLines(dir: string): Promise<string[]> {
  const lines: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const bytes = await readFile(join(dir, name));
    const text = name.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
    lines.push(...text.split("\n").filter((line) => line !== ""));
  }
  return lines;
}

function sink(dir: string, extra: Partial<RotatingFileSinkOptions> = {}): RotatingFileSink {
  return new RotatingFileSink({
    path: join(dir, "audit.log"),
    maxSizeBytes: 1000,
    maxBackups: 0,
    maxAgeDays: 0,
    compress: false,
    ...extra,
  });
}

describe("RotatingFileSink", () => {
  it("RotatingFileSink rotates before a file would pass maxSize, names backups by time, and loses no line", async () => {
    const dir = await tempDir();
    const s = sink(dir);
    const sent = Array.from({ length: 500 }, (_, i) => `{"n":${i},"pad":"${"x".repeat(i % 40)}"}`);
    for (const line of sent) assert.equal(s.write(line), true);
    await s.close();
    const names = await readdir(dir);
    assert.ok(names.length > 10, `expected many rotations, got ${names.length} files`);
    const parser = new BackupNames(join(dir, "audit.log"));
    for (const name of names) {
      if (name !== "audit.log") assert.ok(parser.parse(name), `${name} is a timestamped backup`);
      assert.ok((await stat(join(dir, name))).size <= 1000, `${name} is within maxSize`);
    }
    const got = await allLines(dir);
    assert.equal(got.length, sent.length);
    assert.deepEqual(new Set(got), new Set(sent));
  });

  it("RotatingFileSink.writeLines() splits chunks of lines only between lines at rotation, and releases each once", async () => {
    const dir = await tempDir();
    const s = sink(dir, { maxSizeBytes: 300 });
    const sent = Array.from({ length: 200 }, (_, i) => `{"n":${i},"é":"${"x".repeat(i % 17)}"}`);
    const released: number[] = [];
    for (let i = 0; i < sent.length; i += 40) {
      const chunk = Buffer.from(`${sent.slice(i, i + 40).join("\n")}\n`);
      assert.equal(
        s.writeLines(chunk, () => released.push(i)),
        true,
      );
    }
    await s.close();
    assert.deepEqual(released, [0, 40, 80, 120, 160]);
    for (const name of await readdir(dir)) {
      const content = await readFile(join(dir, name), "utf8");
      assert.ok(Buffer.byteLength(content) <= 300, `${name} is within maxSize`);
      assert.ok(content.endsWith("\n"), `${name} holds whole lines`);
    }
    assert.deepEqual(new Set(await allLines(dir)), new Set(sent));
    assert.equal((await allLines(dir)).length, sent.length);
  });

  it("RotatingFileSink gives a line larger than maxSize a file of its own", async () => {
    const dir = await tempDir();
    const s = sink(dir, { maxSizeBytes: 100 });
    s.write("small");
    s.write("y".repeat(500));
    s.write("after");
    await s.close();
    assert.deepEqual((await allLines(dir)).sort(), ["after", "small", "y".repeat(500)].sort());
    assert.equal((await readdir(dir)).length, 3);
  });

  it("RotatingFileSink compresses rotated files and keeps maxBackups of them", async () => {
    const dir = await tempDir();
    const s = sink(dir, { compress: true, maxBackups: 2 });
    for (let i = 0; i < 300; i++) s.write(`{"n":${i},"pad":"${"z".repeat(20)}"}`);
    await s.settled();
    await s.close();
    const names = await readdir(dir);
    const backups = names.filter((n) => n !== "audit.log");
    assert.equal(backups.length, 2, names.join(", "));
    assert.ok(backups.every((n) => n.endsWith(".log.gz")));
    const kept = await allLines(dir);
    assert.ok(kept.includes('{"n":299,"pad":"zzzzzzzzzzzzzzzzzzzz"}'), "the newest lines are kept");
    assert.ok(!kept.includes('{"n":0,"pad":"zzzzzzzzzzzzzzzzzzzz"}'), "the oldest backups are removed");
  });

  it("RotatingFileSink removes backups older than maxAge days by the time in their names", async () => {
    const dir = await tempDir();
    const names = new BackupNames(join(dir, "audit.log"));
    const now = new Date("2024-06-10T00:00:00.000Z");
    const old = names.name(new Date("2024-06-01T00:00:00.000Z"));
    const recent = names.name(new Date("2024-06-08T00:00:00.000Z"));
    await writeFile(join(dir, old), "old\n");
    await writeFile(join(dir, `${recent}.gz`), "");
    await writeFile(join(dir, "unrelated.txt"), "keep\n");
    // Backups an earlier run of this log made: its record lists them.
    const record = new BackupRecord(join(dir, "audit.log"));
    for (const name of [old, recent]) await record.add(name);
    const s = sink(dir, { maxAgeDays: 5, now: () => now });
    s.write("fresh");
    await s.settled();
    await s.close();
    assert.deepEqual((await readdir(dir)).sort(), ["audit.log", `${recent}.gz`, "unrelated.txt"].sort());
    assert.deepEqual([...(await new BackupRecord(join(dir, "audit.log")).names())], [recent], "the record follows");
  });

  it("RotatingFileSink compresses and removes only the backups it made, whatever else bears their names", async () => {
    const dir = await tempDir();
    const names = new BackupNames(join(dir, "audit.log"));
    const foreign = [
      names.name(new Date("2020-01-01T00:00:00.000Z")),
      `${names.name(new Date("2020-01-02T00:00:00.000Z"))}.gz`,
    ];
    for (const name of foreign) await writeFile(join(dir, name), "not this log's\n");
    const s = sink(dir, { maxSizeBytes: 100, maxBackups: 1, maxAgeDays: 1, compress: true });
    for (let i = 0; i < 20; i++) s.write(`{"n":${i},"pad":"${"p".repeat(40)}"}`);
    await s.settled();
    await s.close();
    const left = await readdir(dir);
    for (const name of foreign) {
      assert.ok(left.includes(name), `${name} is left alone: ${left.join(", ")}`);
      assert.equal(await readFile(join(dir, name), "utf8"), "not this log's\n");
    }
    const own = left.filter((name) => name !== "audit.log" && !foreign.includes(name));
    assert.equal(own.length, 1, `one backup of its own kept: ${left.join(", ")}`);
    assert.ok(own[0].endsWith(".log.gz"));
  });

  it("RotatingFileSink never writes through a symbolic link, nor into a file that is not an audit log", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "encryption.key"), "secret key\n");
    await symlink(join(dir, "encryption.key"), join(dir, "linked.log"));
    for (const [name, reason] of [
      ["linked.log", /is a symbolic link/],
      ["encryption.key", /holds something other than an audit log/],
    ] as const) {
      const failures: string[] = [];
      const s = sink(dir, { path: join(dir, name), onFailure: (_operation, error) => failures.push(error.message) });
      s.write('{"kind":"Event","n":1}');
      await eventually(() => failures.length > 0, `the refusal of ${name}`);
      await s.close(10);
      assert.match(failures[0], reason);
    }
    assert.equal(await readFile(join(dir, "encryption.key"), "utf8"), "secret key\n", "untouched");
    const log = join(dir, "audit.log");
    await writeFile(log, '{"kind":"Event","earlier":true}\n');
    const s = sink(dir);
    s.write('{"kind":"Event","later":true}');
    await s.close();
    assert.equal((await readFile(log, "utf8")).split("\n").filter(Boolean).length, 2, "an audit log is appended to");
  });

  it("RotatingFileSink keeps lines while the disk fails, reports the failure, and writes them once it recovers", async () => {
    const dir = await tempDir();
    const blocked = join(dir, "logs");
    await writeFile(blocked, "a file where the log directory should be");
    const failures: string[] = [];
    const s = new RotatingFileSink({
      path: join(blocked, "audit.log"),
      maxSizeBytes: 1000,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
      onFailure: (operation) => failures.push(operation),
    });
    for (let i = 0; i < 20; i++) s.write(`line ${i}`);
    await eventually(() => failures.length > 0, "a reported failure");
    assert.equal(failures[0], "open");
    await rm(blocked);
    await mkdir(blocked);
    await s.flush();
    await s.close();
    const lines = (await readFile(join(blocked, "audit.log"), "utf8")).trim().split("\n");
    assert.deepEqual(
      lines,
      Array.from({ length: 20 }, (_, i) => `line ${i}`),
    );
  });

  it("RotatingFileSink drops and counts lines past its queue limit, and on close when the disk never recovers", async () => {
    const dir = await tempDir();
    const blocked = join(dir, "blocked");
    await writeFile(blocked, "");
    let dropped = 0;
    const s = new RotatingFileSink({
      path: join(blocked, "audit.log"),
      maxSizeBytes: 1000,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
      maxQueuedBytes: 100,
      onDropped: (n) => {
        dropped += n;
      },
    });
    let accepted = 0;
    for (let i = 0; i < 50; i++) if (s.write(`line ${String(i).padStart(3, "0")}`)) accepted++;
    assert.equal(accepted + dropped, 50);
    assert.ok(dropped > 0 && accepted > 0);
    await s.close(50);
    assert.equal(dropped, 50, "what could not be written by close is counted as dropped");
    assert.equal(s.write("late"), false);
    let released = 0;
    assert.equal(
      s.writeLines(Buffer.from("a\nb\nc\n"), () => released++),
      false,
    );
    assert.equal(dropped, 54, "a dropped chunk counts its lines (after the late line)");
    assert.equal(released, 1, "and is released at once");
  });
});
