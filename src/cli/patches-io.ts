import { readFileSync } from "node:fs";
import { CommandError } from "./command-error.ts";
import { parseKubectlYaml } from "./kubectl-yaml.ts";

/** Where a command writes; the process streams unless a test passes its own. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: () => Promise<string>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export const processIO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readStdin,
};

/** Reads a YAML or JSON object from a file, or from standard input for "-"; YAML is read as kubectl reads it. */
export async function readObject(file: string, io: CommandIO, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === "-" ? await io.stdin() : readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CommandError(`${what} ${file}: cannot read the file${code ? ` (${code})` : ""}`);
  }
  let value: unknown;
  try {
    value = parseKubectlYaml(text);
  } catch (error) {
    throw new CommandError(`${what} ${file}: ${(error as Error).message.split("\n")[0]}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CommandError(`${what} ${file}: must be a single object (YAML or JSON)`);
  }
  return value as Record<string, unknown>;
}
