// The failure of a lifecycle step that the user must fix (a bad name, a clash on the host, a rejected login): its
// lines are the whole message, so the CLI prints them as they are, without a stack trace.

/** The first line of an error's message: what a one-line LifecycleError quotes of a cause. */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0];
}

export class LifecycleError extends Error {
  readonly lines: readonly string[];
  constructor(lines: string | readonly string[]) {
    const list = typeof lines === "string" ? [lines] : lines;
    super(list.join("\n"));
    this.name = "LifecycleError";
    this.lines = list;
  }
}
