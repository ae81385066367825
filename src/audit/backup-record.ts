// The rotated files an audit log made, kept beside it in `.<log name>.backups` (one file name per line), so that
// compression and removal by count and age touch only those: a file that merely has a backup's name, put there by
// someone else or left by a version before this record, is never compressed or deleted. Changes run one at a time:
// a rotation records a backup while the background removal rewrites the record.

import { appendFile, readFile, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export class BackupRecord {
  readonly path: string;
  #changes: Promise<unknown> = Promise.resolve();

  constructor(logPath: string) {
    this.path = join(dirname(logPath), `.${basename(logPath)}.backups`);
  }

  /** Names (uncompressed) of the backups this log made that were not removed since. */
  async names(): Promise<Set<string>> {
    try {
      const text = await readFile(this.path, "utf8");
      return new Set(text.split("\n").filter((name) => name !== ""));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Set();
      throw error;
    }
  }

  /** Records a backup just made (after its rename: a crash in between leaves a backup no removal touches). */
  add(name: string): Promise<void> {
    return this.#change(() => appendFile(this.path, `${name}\n`, { mode: 0o600 }));
  }

  /** Forgets backups that are gone, rewriting the record in one rename. */
  forget(gone: Iterable<string>): Promise<void> {
    const drop = new Set(gone);
    return this.#change(async () => {
      const kept = [...(await this.names())].filter((name) => !drop.has(name));
      const temp = `${this.path}.tmp`;
      await writeFile(temp, kept.map((name) => `${name}\n`).join(""), { mode: 0o600 });
      await rename(temp, this.path);
    });
  }

  #change(work: () => Promise<void>): Promise<void> {
    const next = this.#changes.then(work);
    this.#changes = next.catch(() => undefined);
    return next;
  }
}
