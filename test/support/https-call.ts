// One HTTPS request trusting the platform's CA, with any headers (cookies, the console header): what curl would send.

import { request } from "node:https";

export interface CallReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text(): string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read replies field by field
  json(): any;
}

export function httpsCall(
  target: { url: string; caPem: string },
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<CallReply> {
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${path}`,
      {
        method,
        ca: target.caPem,
        headers: { accept: "application/json", ...(payload ? { "content-type": contentType } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const all = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: all,
            text: () => all.toString("utf8"),
            json: () => JSON.parse(all.toString("utf8")),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
