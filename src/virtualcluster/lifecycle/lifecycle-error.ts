// The failure of a lifecycle step that the user must fix (a bad name, a clash on the host, a rejected login): its
// lines are the whole message, so the CLI prints them as they are, without a stack trace.

export class LifecycleError extends Error {
  readonly lines: readonly string[];
  constructor(lines: string | readonly string[]) {
    const list = typeof lines === "string" ? [lines] : lines;
    super(list.join("\n"));
    this.name = "LifecycleError";
    this.lines = list;
  }
}
