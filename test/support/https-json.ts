// Plain HTTPS requests to a test platform (trusting its CA), and capture of a child process's log output.

import type { Readable } from "node:stream";
import { AuthClient, type Reply, type SendOptions } from "./auth-client.ts";
import type { PlatformProcess } from "./platform-process.ts";

export type { Reply, SendOptions };

/** One request on a fresh connection (the auth tests' client, without keeping the socket alive afterwards). */
export async function send(
  platform: PlatformProcess,
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<Reply> {
  const client = new AuthClient(platform.url, platform.caPem);
  try {
    return await client.send(method, path, options);
  } finally {
    client.agent.destroy();
  }
}

/** Collects what a stream prints from now on. */
export function capture(stream: Readable | null | undefined): () => string {
  let text = "";
  stream?.on("data", (chunk) => {
    text += chunk;
  });
  return () => text;
}
