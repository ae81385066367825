// A small HTTPS client for setup and checks (not for load: autocannon does that): JSON requests with the admin
// bearer key over one keep-alive agent that trusts the platform's CA.

import { Agent, request } from "node:https";

export const GROUP_VERSION = "management.platform.sh/v1";
export const USERS_PATH = `/apis/${GROUP_VERSION}/users`;

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export class ApiClient {
  readonly agent: Agent;
  private readonly url: URL;
  private readonly token: string;

  constructor(baseUrl: string, token: string, ca: string, maxSockets = 64) {
    this.url = new URL(baseUrl);
    this.token = token;
    // FIFO: every pooled socket is reused in turn, so none sits idle until the server's keep-alive timeout (5 s)
    // closes it just as a request is written on it (ECONNRESET).
    this.agent = new Agent({ keepAlive: true, maxSockets, ca, scheduling: "fifo" });
  }

  request(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path,
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: "application/json",
            ...(payload === undefined
              ? {}
              : { "content-type": contentType, "content-length": Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** Like request(), but fails unless the status is the expected one; returns the parsed body. */
  async expect<T = Record<string, unknown>>(
    status: number,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<T> {
    const res = await this.request(method, path, body, contentType);
    if (res.status !== status) {
      throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${res.body.slice(0, 500)}`);
    }
    return JSON.parse(res.body) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The user the scenarios create, get and patch: every commonly used spec field filled in. */
export function benchUser(metadata: { name?: string; generateName?: string }): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: "User",
    metadata: { ...metadata, labels: { "bench.platform.sh/kind": "load" } },
    spec: {
      displayName: "Bench User",
      username: metadata.name ?? "bench-user",
      email: "bench.user@example.com",
      groups: ["developers", "operators"],
    },
  };
}

/** Runs `count` tasks with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Number of users stored: a LIST with limit=1 plus its remainingItemCount. */
export async function countUsers(api: ApiClient): Promise<number> {
  const list = await api.expect<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
    200,
    "GET",
    `${USERS_PATH}?limit=1`,
  );
  return list.items.length + (list.metadata.remainingItemCount ?? 0);
}
