// The audit log file: lines are queued in memory and appended by one background writer, so a request never
// waits for the disk. Lines arrive as UTF-8 chunks of whole lines (the audit worker's batches, written as they
// came: no copy, no re-encoding) and are appended a chunk per write. The file is rotated before a write would pass maxSize (a line is never split across files;
// a single line larger than maxSize gets a file of its own); rotated files get the rotation time in their name,
// are gzip-compressed in the background when asked, and removed by count (maxBackups) and age (maxAge, by the
// time in the name). Only files this log made are touched: the log is never a symbolic link nor a file holding
// anything but audit events, and backups are compressed and removed only when its record lists them
// (backup-record.ts). A failing disk is retried with backoff; while it fails, lines wait in the bounded queue and
// past its limit are dropped and counted. Failures are reported to the owner (logs, metrics).
//
// Own code rather than rotating-file-stream: that package has no age-based removal, keeps a separate history
// file for its count limit, and ends its stream on a write error, where this sink must keep lines and retry.

import { constants, createReadStream, createWriteStream } from "node:fs";
import { access, type FileHandle, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { createGzip } from "node:zlib";
import { type Backup, BackupNames, compareBackups } from "./backup-names.ts";
import { BackupRecord } from "./backup-record.ts";

export type SinkOperation = "open" | "write" | "rotate" | "compress" | "cleanup";

export interface RotationSettings {
  /** Rotate before the file would exceed this many bytes. */
  maxSizeBytes: number;
  /** Rotated files to keep; 0 keeps all. */
  maxBackups: number;
  /** Days to keep rotated files; 0 keeps them regardless of age. */
  maxAgeDays: number;
  compress: boolean;
}

export interface RotatingFileSinkOptions extends RotationSettings {
  path: string;
  /** Bytes of lines waiting for the disk before new lines are dropped. Default 64 MiB. */
  maxQueuedBytes?: number;
  /** Opening waits for this (the previous sink of the same file closing). */
  startAfter?: Promise<unknown>;
  now?: () => Date;
  onFailure?: (operation: SinkOperation, error: Error) => void;
  onDropped?: (lines: number) => void;
}

const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** Small chunks (single lines) queued together are joined into one append of at most this many bytes. */
const MAX_JOINED_BYTES = 1024 * 1024;
const NEWLINE = 10;

/** Queued bytes: whole lines, each ending in a newline. */
interface Chunk {
  bytes: Buffer;
  /** Called once the sink no longer needs the bytes (written, or dropped). */
  release: (() => void) | undefined;
}

function countLines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}
const MAX_RETRY_DELAY_MS = 5_000;
/** Every line an audit log holds starts so (event.ts, minimal-event.ts). */
const EVENT_START = Buffer.from('{"kind":"Event"');
/** Append (reading only the first bytes, to check them), create owner-only, never through a symbolic link. */
const OPEN_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
const DAY_MS = 24 * 60 * 60 * 1000;

export class RotatingFileSink {
  readonly path: string;
  private settings: RotationSettings;
  private readonly options: RotatingFileSinkOptions;
  private readonly names: BackupNames;
  private readonly record: BackupRecord;
  private readonly maxQueued: number;
  private queue: Chunk[] = [];
  private queued = 0;
  private handle: FileHandle | undefined;
  private size = 0;
  private draining: Promise<void> | undefined;
  private mill: Promise<void> = Promise.resolve();
  private milledOnce = false;
  private retryDelay = 0;
  private stopped = false;
  private readonly stopping = new AbortController();

  constructor(options: RotatingFileSinkOptions) {
    this.options = options;
    this.path = options.path;
    this.settings = { ...options };
    this.names = new BackupNames(options.path);
    this.record = new BackupRecord(options.path);
    this.maxQueued = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  }

  /** Queues one line (without newline). False when it was dropped (queue full or sink closed). */
  write(line: string): boolean {
    return this.writeLines(Buffer.from(`${line}\n`));
  }

  /**
   * Queues whole lines as UTF-8, each ending in a newline; the sink holds `bytes` (no copy) until they are written
   * or dropped, then calls `release`. False when they were dropped (queue full or sink closed).
   */
  writeLines(bytes: Buffer, release?: () => void): boolean {
    if (this.stopped || this.queued + bytes.length > this.maxQueued) {
      this.options.onDropped?.(countLines(bytes));
      release?.();
      return false;
    }
    this.queue.push({ bytes, release });
    this.queued += bytes.length;
    this.kick();
    return true;
  }

  /** Bytes of lines waiting for the disk. */
  queuedBytes(): number {
    return this.queued;
  }

  /** New rotation settings take effect from the next write. */
  reconfigure(settings: RotationSettings): void {
    this.settings = { ...settings };
    this.scheduleMill();
  }

  /** Resolves when every line queued so far is on disk. */
  async flush(): Promise<void> {
    while (this.draining || (this.queue.length > 0 && !this.stopped)) {
      this.kick();
      await this.draining;
    }
  }

  /** Resolves when queued lines are written and background compression and removal are done. */
  async settled(): Promise<void> {
    await this.flush();
    await this.mill;
  }

  /** Writes what is queued (waiting at most `timeoutMs` for a failing disk; the rest is dropped), then closes. */
  async close(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([this.flush(), timedOut]);
    clearTimeout(timer);
    this.stopped = true;
    this.stopping.abort();
    if (this.queue.length > 0) {
      const dropped = this.queue;
      this.queue = [];
      this.queued = 0;
      this.options.onDropped?.(dropped.reduce((sum, chunk) => sum + countLines(chunk.bytes), 0));
      for (const chunk of dropped) chunk.release?.();
    }
    await this.draining;
    await this.closeHandle();
    await this.mill;
  }

  private kick(): void {
    if (this.draining || this.stopped) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0 && !this.stopped) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      let operation: SinkOperation = "open";
      try {
        await this.options.startAfter;
        await this.ensureOpen();
        const { bytes, count } = this.nextAppend();
        const room = this.settings.maxSizeBytes - this.size;
        let length = bytes.length;
        if (length > room) {
          // The whole lines that still fit; none: rotate first, or a line larger than maxSize gets a file of its own.
          const fits = room > 0 ? bytes.lastIndexOf(NEWLINE, room - 1) + 1 : 0;
          if (fits > 0) length = fits;
          else if (this.size > 0) {
            operation = "rotate";
            await this.rotate();
            continue;
          } else length = bytes.indexOf(NEWLINE) + 1 || bytes.length;
        }
        operation = "write";
        await this.append(length === bytes.length ? bytes : bytes.subarray(0, length));
        this.size += length;
        this.consume(count, length);
        this.retryDelay = 0;
      } catch (error) {
        // Nothing is lost: unwritten lines stay at the front of the queue, in order.
        this.options.onFailure?.(operation, error as Error);
        await this.closeHandle();
        this.retryDelay = Math.min(this.retryDelay ? this.retryDelay * 2 : 100, MAX_RETRY_DELAY_MS);
        await sleep(this.retryDelay, undefined, { ref: false, signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  /** The bytes of the next append: the first chunk, or several small ones joined. `count`: chunks it spans. */
  private nextAppend(): { bytes: Buffer; count: number } {
    const first = this.queue[0].bytes;
    let count = 1;
    let bytes = first.length;
    while (count < this.queue.length && bytes + this.queue[count].bytes.length <= MAX_JOINED_BYTES) {
      bytes += this.queue[count].bytes.length;
      count++;
    }
    if (count === 1) return { bytes: first, count };
    return {
      bytes: Buffer.concat(
        this.queue.slice(0, count).map((chunk) => chunk.bytes),
        bytes,
      ),
      count,
    };
  }

  /** `length` bytes of the first `count` chunks are on disk: release the chunks written whole, keep the rest. */
  private consume(count: number, length: number): void {
    this.queued -= length;
    let left = length;
    for (let i = 0; i < count && left > 0; i++) {
      const chunk = this.queue[0];
      if (chunk.bytes.length > left) {
        chunk.bytes = chunk.bytes.subarray(left);
        return;
      }
      left -= chunk.bytes.length;
      this.queue.shift();
      chunk.release?.();
    }
  }

  private async ensureOpen(): Promise<void> {
    if (this.handle) return;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    let handle: FileHandle;
    try {
      handle = await open(this.path, OPEN_FLAGS, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
      throw new Error(`${this.path} is a symbolic link: the audit log writes only a file of its own`);
    }
    try {
      this.size = (await handle.stat()).size;
      await checkIsAuditLog(handle, this.path, this.size);
    } catch (error) {
      await handle.close();
      throw error;
    }
    this.handle = handle;
    if (!this.milledOnce) {
      this.milledOnce = true;
      this.scheduleMill(); // compress and prune what an earlier run left
    }
  }

  private async append(buffer: Buffer): Promise<void> {
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle!.write(buffer, offset, buffer.length - offset);
      offset += bytesWritten;
    }
  }

  private async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  private async rotate(): Promise<void> {
    await this.closeHandle();
    const time = this.options.now?.() ?? new Date();
    const dir = dirname(this.path);
    let counter = 0;
    let name = this.names.name(time);
    while ((await exists(join(dir, name))) || (await exists(join(dir, `${name}.gz`)))) {
      name = this.names.name(time, ++counter);
    }
    await rename(this.path, join(dir, name));
    // After the rename: the record never names a file that is not there yet (a crash in between keeps the backup).
    await this.record.add(name);
    this.size = 0;
    this.scheduleMill();
  }

  private scheduleMill(): void {
    this.mill = this.mill
      .then(() => this.runMill())
      .catch((error) => this.options.onFailure?.("cleanup", error as Error));
  }

  private async runMill(): Promise<void> {
    const dir = dirname(this.path);
    // The record before the directory: every backup it names was renamed into place before this read.
    const made = await this.record.names();
    let files: string[];
    try {
      files = await readdir(dir);
    } catch (error) {
      this.options.onFailure?.("cleanup", error as Error);
      return;
    }
    const backups = files
      .map((name) => this.names.parse(name))
      .filter((b): b is Backup => b !== undefined && b.name !== basename(this.path))
      .filter((b) => made.has(b.compressed ? b.name.slice(0, -3) : b.name));
    const present = new Set(files);
    if (this.settings.compress) {
      for (const backup of backups.filter((b) => !b.compressed)) {
        try {
          await gzipFile(join(dir, backup.name));
          present.delete(backup.name);
          present.add(`${backup.name}.gz`);
        } catch (error) {
          this.options.onFailure?.("compress", error as Error);
        }
      }
    }
    // One entry per rotation (a file and its .gz count once), newest first.
    const byRotation = new Map<string, Backup>();
    for (const backup of backups) byRotation.set(backup.compressed ? backup.name.slice(0, -3) : backup.name, backup);
    const ordered = [...byRotation.entries()].sort((a, b) => compareBackups(a[1], b[1]));
    const now = (this.options.now?.() ?? new Date()).getTime();
    const { maxBackups, maxAgeDays } = this.settings;
    for (const [index, [base, backup]] of ordered.entries()) {
      const tooMany = maxBackups > 0 && index >= maxBackups;
      const tooOld = maxAgeDays > 0 && now - backup.time.getTime() > maxAgeDays * DAY_MS;
      if (!tooMany && !tooOld) continue;
      for (const name of [base, `${base}.gz`]) {
        if (!present.has(name)) continue;
        try {
          await rm(join(dir, name), { force: true });
          present.delete(name);
        } catch (error) {
          this.options.onFailure?.("cleanup", error as Error);
        }
      }
    }
    // The record keeps the backups still there; names whose file is gone (removed, or a crash before its rename) go.
    const gone = [...made].filter((name) => !present.has(name) && !present.has(`${name}.gz`));
    if (gone.length > 0) await this.record.forget(gone);
  }
}

/** Refuses to append to a file that holds something other than audit events (another file given as audit.path). */
async function checkIsAuditLog(handle: FileHandle, path: string, size: number): Promise<void> {
  if (size === 0) return;
  const head = Buffer.alloc(Math.min(size, EVENT_START.length));
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  if (bytesRead === EVENT_START.length && head.equals(EVENT_START)) return;
  throw new Error(`${path} holds something other than an audit log: it is left alone; name a new file in audit.path`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** path -> path.gz, crash-safe: written to a temporary name, renamed, then the original removed. */
async function gzipFile(path: string): Promise<void> {
  const temporary = `${path}.gz.tmp`;
  await pipeline(createReadStream(path), createGzip(), createWriteStream(temporary, { mode: 0o600 }));
  await rename(temporary, `${path}.gz`);
  await rm(path, { force: true });
}
