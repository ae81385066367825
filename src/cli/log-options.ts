// --log-level and --log-format of the long-running commands (platform start, apiserver, run). Both formats carry the
// same record: JSON lines (pino's) for machines, and for people one line each, "time LEVEL message key=value ...".
// The default is text on a terminal and JSON elsewhere (files, pipes, the background runtime's log).

import { type Command, Option } from "commander";
import type { Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export const LOG_FORMATS = ["text", "json"] as const;

export interface LogFlags {
  logLevel?: (typeof LOG_LEVELS)[number];
  logFormat?: (typeof LOG_FORMATS)[number];
}

export function addLogOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--log-level <level>", "least severe log records to write (default: $LOG_LEVEL, else info)").choices(
        LOG_LEVELS,
      ),
    )
    .addOption(
      new Option("--log-format <format>", "log format on stderr (default: text on a terminal, else json)").choices(
        LOG_FORMATS,
      ),
    );
}

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};
// Positional in the text line, or the same in every record of the process.
const OMITTED = new Set(["level", "time", "msg", "pid", "hostname"]);

function textValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value !== null && typeof value === "object" && "message" in value && "type" in value) {
    // pino's serialized error: its message is what a person needs; the stack is in the JSON format.
    return JSON.stringify(String((value as { message: unknown }).message));
  }
  return JSON.stringify(value);
}

/** One pino JSON record as a text line: "2026-01-01T00:00:00.000Z INFO  message key=value ...". */
export function formatLogLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const time = typeof record.time === "number" ? new Date(record.time).toISOString() : "";
  const level = (LEVEL_NAMES[record.level as number] ?? String(record.level)).padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${textValue(value)}`);
  return `${[time, level, String(record.msg ?? ""), ...fields].filter((part) => part !== "").join(" ")}\n`;
}

/** The logger of a long-running command, writing to stderr in the chosen (or default) format. */
export async function commandLogger(flags: LogFlags, stderr: NodeJS.WriteStream = process.stderr): Promise<Logger> {
  const { pino } = await import("pino");
  const level = flags.logLevel ?? process.env.LOG_LEVEL ?? "info";
  const format = flags.logFormat ?? (stderr.isTTY ? "text" : "json");
  if (format === "json") return pino({ level }, pino.destination(2));
  return pino({ level }, { write: (line: string) => void stderr.write(formatLogLine(line)) });
}
