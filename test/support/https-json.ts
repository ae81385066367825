// Plain HTTPS requests to a test platform (trusting its CA), and capture of a child process's log output.

import { request } from "node:https";
import type { Readable } from "node:stream";
import type { PlatformProcess } from "./platform-process.ts";

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: assertions navigate response JSON freely
  json(): any;
}

export interface SendOptions {
  token?: string;
  body?: unknown;
  contentType?: string;
}

export function send(
  platform: PlatformProcess,
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] = options.contentType ?? "application/json";
  }
  return new Promise((resolve, reject) => {
    const req = request(`${platform.url}${path}`, { method, headers, ca: platform.caPem }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }),
      );
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** Collects what a stream prints from now on. */
export function capture(stream: Readable | null | undefined): () => string {
  let text = "";
  stream?.on("data", (chunk) => {
    text += chunk;
  });
  return () => text;
}
