// In a file of its own so that what only reports errors (terminal.ts, every command) does not load the YAML reader
// of patches-io.ts: `platform start` never reads YAML (issue 36, idle memory).

/** A problem the user must fix: printed as one line per entry, exit code 1, no stack trace. */
export class CommandError extends Error {
  readonly lines: readonly string[];
  constructor(lines: string | readonly string[]) {
    const list = typeof lines === "string" ? [lines] : lines;
    super(list.join("\n"));
    this.name = "CommandError";
    this.lines = list;
  }
}
