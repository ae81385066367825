// What the terminal allows: colour and spinners only on a TTY (never with NO_COLOR, TERM=dumb or in CI), and reading
// a secret without echo.

import { CommandError } from "./command-error.ts";

interface Stream {
  isTTY?: boolean;
  write(text: string): boolean;
}

/** Colour on this stream: a terminal, NO_COLOR unset or empty, TERM not dumb. */
export function colorEnabled(stream: Stream, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";
}

export interface Styles {
  bold(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;

export function styles(enabled: boolean): Styles {
  return enabled
    ? { bold: wrap(1, 22), green: wrap(32, 39), red: wrap(31, 39), yellow: wrap(33, 39) }
    : { bold: plain, green: plain, red: plain, yellow: plain };
}

export interface Spinner {
  stop(): void;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** An animated "text..." on a terminal; nothing at all elsewhere (pipes, files, CI). */
export function startSpinner(text: string, stream: Stream = process.stderr, env = process.env): Spinner {
  if (!colorEnabled(stream, env) || env.CI) return { stop() {} };
  let frame = 0;
  const draw = () => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${text}`);
  draw();
  const timer = setInterval(draw, 80);
  return {
    stop() {
      clearInterval(timer);
      stream.write("\r\u001b[2K");
    },
  };
}

/** Runs `work` with a spinner that is always cleared afterwards. */
export async function withSpinner<T>(text: string, work: () => Promise<T>): Promise<T> {
  const spinner = startSpinner(text);
  try {
    return await work();
  } finally {
    spinner.stop();
  }
}

const PROGRESS_EVERY_MS = 10_000;

/**
 * For the long waits (a virtual cluster starting): a spinner on a terminal; elsewhere (pipes, logs, CI) a line when
 * the wait begins and another every ten seconds, so a script's output shows what it waits for.
 */
export async function withProgress<T>(text: string, work: () => Promise<T>, stream: Stream = process.stderr) {
  if (colorEnabled(stream) && !process.env.CI) return withSpinner(text, work);
  const started = Date.now();
  stream.write(`${text}...\n`);
  const timer = setInterval(() => {
    stream.write(`${text}... (${Math.round((Date.now() - started) / 1000)}s)\n`);
  }, PROGRESS_EVERY_MS);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** The first line of standard input (the rest is ignored), without its line ending. */
export async function readFirstLine(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    if (chunk.includes("\n")) break;
  }
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0];
}

/** Prompts on stderr and reads one line from the terminal without echoing it. */
export function promptHidden(prompt: string): Promise<string> {
  const input = process.stdin;
  const output = process.stderr;
  output.write(prompt);
  input.setRawMode(true);
  input.setEncoding("utf8");
  input.resume();
  let value = "";
  return new Promise((resolve, reject) => {
    const finish = () => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      output.write("\n");
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") {
          finish();
          resolve(value);
          return;
        }
        if (ch === "\u0003" || (ch === "\u0004" && value === "")) {
          finish();
          reject(new CommandError("cancelled"));
          return;
        }
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    };
    input.on("data", onData);
  });
}
