// A client of Vault's KV secrets engine, version 2, over its HTTP API (the calls a real Vault answers):
//   read    GET    /v1/<mount>/data/<path>           -> {data: {data, metadata: {version, ...}}}; 404: no live version
//   write   POST   /v1/<mount>/data/<path>           {data, options: {cas}} -> {data: {version, ...}}
//   delete  DELETE /v1/<mount>/metadata/<path>       every version and the metadata
// with X-Vault-Token, X-Vault-Namespace (when set) and X-Vault-Request: true. Failures are VaultErrors whose
// messages name the call and Vault's reason, never the token or a value.

import { request as httpsRequest } from "node:https";
import { http } from "../utils/node-http.ts";

export interface VaultKvOptions {
  /** The store's address, e.g. https://vault.example.com:8200 (a path prefix is kept). */
  address: string;
  token: string;
  /** X-Vault-Namespace (Vault Enterprise namespaces); empty: none. */
  namespace?: string;
  /** Path of the KV version 2 engine (default "secret"). */
  mount?: string;
  skipTLSVerify?: boolean;
  /** Extra trusted CA certificates (PEM) for the store's certificate. */
  ca?: string;
  /** Per call (default 10 s). */
  timeoutMs?: number;
}

export type VaultErrorReason =
  | "Sealed" // 503
  | "PermissionDenied" // 403
  | "CheckAndSetFailed" // 400 on a write with cas
  | "Unreachable" // no HTTP answer
  | "BadRequest" // other 4xx
  | "ServerError"; // other 5xx or an answer that is not KV v2

export class VaultError extends Error {
  readonly reason: VaultErrorReason;
  readonly status?: number;

  constructor(reason: VaultErrorReason, message: string, status?: number) {
    super(message);
    this.name = "VaultError";
    this.reason = reason;
    this.status = status;
  }
}

export interface KvSecret {
  data: Record<string, string>;
  version: number;
}

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** Each segment escaped; "." and ".." refused (they would leave the folder). */
export function kvPath(...segments: string[]): string {
  const parts = segments.flatMap((segment) => segment.split("/")).filter((part) => part !== "");
  if (parts.some((part) => part === "." || part === "..")) throw new Error(`invalid secret store path segment`);
  return parts.map(encodeURIComponent).join("/");
}

export class VaultKvClient {
  private readonly options: VaultKvOptions;
  private readonly base: URL;
  private readonly mount: string;

  constructor(options: VaultKvOptions) {
    this.options = options;
    this.base = new URL(options.address.endsWith("/") ? options.address : `${options.address}/`);
    this.mount = kvPath(options.mount ?? "secret");
  }

  /** The API path of a secret's data, as shown in status (no address). */
  dataPath(path: string): string {
    return `${this.mount}/data/${path}`;
  }

  /** The newest version, or undefined when there is none (never written, deleted or destroyed). */
  async read(path: string): Promise<KvSecret | undefined> {
    const answer = await this.call("GET", `v1/${this.mount}/data/${path}`, undefined, "read");
    if (answer.status === 404) return undefined;
    const body = answer.json as { data?: { data?: unknown; metadata?: { version?: unknown } } } | undefined;
    const data = body?.data?.data;
    const version = body?.data?.metadata?.version;
    if (!data || typeof data !== "object" || typeof version !== "number") {
      throw new VaultError("ServerError", `read ${this.dataPath(path)}: the answer is not a KV version 2 secret`);
    }
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(data))
      out[key] = typeof value === "string" ? value : JSON.stringify(value);
    return { data: out, version };
  }

  /**
   * Writes a new version. With `cas`, only if the newest version is `cas` (0: only if the secret does not exist);
   * otherwise VaultError "CheckAndSetFailed". Resolves to the new version.
   */
  async write(path: string, data: Record<string, string>, cas?: number): Promise<number> {
    const body = { data, ...(cas === undefined ? {} : { options: { cas } }) };
    const answer = await this.call("POST", `v1/${this.mount}/data/${path}`, body, "write");
    const version = (answer.json as { data?: { version?: unknown } } | undefined)?.data?.version;
    if (typeof version !== "number") {
      throw new VaultError("ServerError", `write ${this.dataPath(path)}: the answer names no version`);
    }
    return version;
  }

  /** Deletes every version and the metadata (nothing to do when there is none). */
  async destroy(path: string): Promise<void> {
    const answer = await this.call("DELETE", `v1/${this.mount}/metadata/${path}`, undefined, "delete");
    if (answer.status === 404) return;
  }

  private async call(
    method: string,
    path: string,
    body: unknown,
    what: string,
  ): Promise<{ status: number; json: unknown }> {
    const url = new URL(path, this.base);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      "X-Vault-Token": this.options.token,
      "X-Vault-Request": "true",
      Accept: "application/json",
    };
    if (this.options.namespace) headers["X-Vault-Namespace"] = this.options.namespace;
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(payload));
    }
    const label = `${what} ${decodeURIComponent(path.replace(/^v1\//, ""))}`;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest : http.request;
      const req = send(
        url,
        {
          method,
          headers,
          timeout: this.options.timeoutMs ?? 10_000,
          rejectUnauthorized: !this.options.skipTLSVerify,
          ...(this.options.ca ? { ca: this.options.ca } : {}),
        },
        (response) => {
          let size = 0;
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) response.destroy(new Error("the answer is too large"));
            else chunks.push(chunk);
          });
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer in ${this.options.timeoutMs ?? 10_000} ms`)));
      req.on("error", reject);
      req.end(payload);
    }).catch((error: Error) => {
      throw new VaultError("Unreachable", `${label}: ${this.base.origin} is unreachable: ${error.message}`);
    });
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (status >= 200 && status < 300) return { status, json };
    if (status === 404 && method !== "POST") return { status, json };
    throw errorOf(status, json, label, method === "POST" && body !== undefined);
  }
}

/** Vault's reason for a failure, from its {"errors": [...]} body, bounded. */
function errorOf(status: number, json: unknown, label: string, write: boolean): VaultError {
  const list = (json as { errors?: unknown } | undefined)?.errors;
  const detail = Array.isArray(list)
    ? list
        .filter((e) => typeof e === "string")
        .join("; ")
        .slice(0, 300)
    : "";
  const why = detail ? `: ${detail}` : "";
  if (status === 503)
    return new VaultError("Sealed", `${label}: the secret store is sealed or unavailable (503)${why}`, status);
  if (status === 403) return new VaultError("PermissionDenied", `${label}: permission denied (403)${why}`, status);
  if (status === 400 && write && /check-and-set/i.test(detail)) {
    return new VaultError(
      "CheckAndSetFailed",
      `${label}: the secret changed in the store (check-and-set)${why}`,
      status,
    );
  }
  if (status >= 400 && status < 500) return new VaultError("BadRequest", `${label}: refused (${status})${why}`, status);
  return new VaultError("ServerError", `${label}: the secret store failed (${status})${why}`, status);
}
