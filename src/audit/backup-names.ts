// Names of rotated audit log files, as lumberjack (the Go logger the original uses) names them: the file name
// with the rotation time (UTC, millisecond precision) before the extension, e.g.
//   audit.log -> audit-2024-05-01T12-00-00.123.log, compressed audit-2024-05-01T12-00-00.123.log.gz
// Two rotations within one millisecond get a counter: audit-2024-05-01T12-00-00.123-1.log.

import { basename, extname } from "node:path";

export interface Backup {
  /** File name (no directory). */
  name: string;
  time: Date;
  counter: number;
  compressed: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function stamp(time: Date): string {
  return time.toISOString().slice(0, 23).replaceAll(":", "-");
}

export class BackupNames {
  private readonly prefix: string;
  private readonly ext: string;
  private readonly pattern: RegExp;

  constructor(logPath: string) {
    const name = basename(logPath);
    this.ext = extname(name);
    this.prefix = name.slice(0, name.length - this.ext.length);
    this.pattern = new RegExp(
      `^${escapeRegExp(this.prefix)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})(?:-(\\d+))?${escapeRegExp(this.ext)}(\\.gz)?$`,
    );
  }

  /** The name of a backup rotated at `time` (counter > 0 only on a name clash). */
  name(time: Date, counter = 0): string {
    return `${this.prefix}-${stamp(time)}${counter > 0 ? `-${counter}` : ""}${this.ext}`;
  }

  /** Parses a file name of this log's backups; undefined for any other file. */
  parse(name: string): Backup | undefined {
    const match = this.pattern.exec(name);
    if (!match) return undefined;
    const [date, time] = match[1].split("T");
    const iso = `${date}T${time.slice(0, 8).replaceAll("-", ":")}${time.slice(8)}Z`;
    const parsed = new Date(iso);
    if (Number.isNaN(parsed.getTime())) return undefined;
    return { name, time: parsed, counter: Number(match[2] ?? 0), compressed: match[3] !== undefined };
  }
}

/** Newest first. */
export function compareBackups(a: Backup, b: Backup): number {
  return b.time.getTime() - a.time.getTime() || b.counter - a.counter;
}
