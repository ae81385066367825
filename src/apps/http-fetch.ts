// Reading a chart repository's files over HTTP(S) as Helm does: basic auth when the repository has a user name,
// certificate checks unless `insecure`, up to three redirects, and credentials only to the repository's own host
// (Helm's default without --pass-credentials). Answers are bounded; a failure names the address without credentials.

import { request as httpsRequest } from "node:https";
import { http } from "../utils/node-http.ts";

export interface FetchOptions {
  username?: string;
  password?: string;
  insecure?: boolean;
  /** Largest answer accepted (bytes). */
  maxBytes: number;
  timeoutMs?: number;
  /** The host credentials may go to (default: the first address's). */
  credentialsHost?: string;
}

export class FetchError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = "FetchError";
    this.status = status;
  }
}

/** The address without user information or query (for messages). */
export function displayUrl(url: string | URL): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

export async function fetchBytes(address: string | URL, options: FetchOptions): Promise<Buffer> {
  let url = new URL(address);
  const credentialsHost = options.credentialsHost ?? url.host;
  for (let hop = 0; hop <= 3; hop++) {
    const answer = await getOnce(url, options, url.host === credentialsHost);
    if (answer.location) {
      url = new URL(answer.location, url);
      continue;
    }
    return answer.body ?? Buffer.alloc(0);
  }
  throw new FetchError(`${displayUrl(address)}: too many redirects`);
}

function getOnce(
  url: URL,
  options: FetchOptions,
  withCredentials: boolean,
): Promise<{ location?: string; body?: Buffer }> {
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Promise.reject(new FetchError(`${displayUrl(url)}: only http and https addresses are supported`));
  }
  const headers: Record<string, string> = { Accept: "*/*", "User-Agent": "virtualcluster-platform" };
  if (withCredentials && options.username) {
    headers.Authorization = `Basic ${Buffer.from(`${options.username}:${options.password ?? ""}`).toString("base64")}`;
  }
  const send = url.protocol === "https:" ? httpsRequest : http.request;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: "GET", headers, timeout: options.timeoutMs ?? 30_000, rejectUnauthorized: !options.insecure },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume();
          resolve({ location: response.headers.location });
          return;
        }
        if (status !== 200) {
          response.resume();
          const why = status === 401 || status === 403 ? " (check the repository's username and password)" : "";
          reject(new FetchError(`${displayUrl(url)}: answered ${status}${why}`, status));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            req.destroy(new FetchError(`${displayUrl(url)}: larger than ${options.maxBytes} bytes`));
          } else chunks.push(chunk);
        });
        response.on("end", () => resolve({ body: Buffer.concat(chunks) }));
        response.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new FetchError(`${displayUrl(url)}: no answer in time`)));
    req.on("error", (error) =>
      reject(error instanceof FetchError ? error : new FetchError(`${displayUrl(url)}: ${error.message}`)),
    );
    req.end();
  });
}
