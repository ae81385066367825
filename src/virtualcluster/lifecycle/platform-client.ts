// A small HTTPS client for the platform API: bearer access key, the login's CA data or --insecure, JSON in and out,
// and every failure (network, TLS, a Status from the server, something that is not the platform) as one clear line.

import type { IncomingMessage } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { http } from "../../utils/node-http.ts";
import { PLATFORM_API_PREFIX } from "../connect/platform-api-prefix.ts";
import type { PlatformLogin } from "./platform-login.ts";

export const API_GROUP_PATH = `${PLATFORM_API_PREFIX}/apis/management.platform.sh/v1`;
export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
const TIMEOUT_MS = 30_000;

/** A failure to show the user as it is: one line, no stack trace. `code` is the HTTP status when there was one. */
export class PlatformError extends Error {
  readonly code?: number;
  readonly reason?: string;
  constructor(message: string, code?: number, reason?: string) {
    super(message);
    this.name = "PlatformError";
    this.code = code;
    this.reason = reason;
  }
}

export interface RequestOptionsLite {
  body?: unknown;
  accept?: string;
  /** Send no Authorization header (password login). */
  anonymous?: boolean;
}

/** The text of each `Warning: 299 - "text"` header (the server's notes, e.g. a reduced ttl). */
export function warningTexts(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const texts: string[] = [];
  for (const value of values) {
    for (const match of value.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) texts.push(match[1].replace(/\\(.)/g, "$1"));
  }
  return texts;
}

const TLS_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_SIGNATURE_FAILURE",
]);

const oneLine = (text: string) =>
  text
    .replace(/:\s*\n\s*/g, ": ")
    // Tried only where a run of whitespace starts: from every start inside one the match was quadratic.
    .replace(/(?<!\s)\s*\n\s*/g, "; ")
    .trim();

/** The one line for a failed connection (no response at all). */
export function networkErrorLine(host: string, error: NodeJS.ErrnoException): string {
  const where = new URL(host).host;
  const code = error.code ?? "";
  if (TLS_CODES.has(code)) {
    // Node's own text may append advice about its flags; the reason is the part before it.
    const reason = oneLine(error.message).split(";")[0];
    return `cannot verify the certificate of ${where} (${reason}): log in with --ca-file <the platform's CA certificate>, or --insecure`;
  }
  if (code === "ECONNREFUSED") return `cannot connect to ${where}: connection refused (is the platform running?)`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `cannot resolve the host name of ${where}`;
  if (code === "ETIMEDOUT" || code === "TIMEOUT") return `no answer from ${where} within ${TIMEOUT_MS / 1000}s`;
  if (code === "EPROTO" || /wrong version number|packet length too long/i.test(error.message)) {
    return `${where} did not answer with TLS (is it a plain http:// address?)`;
  }
  if (code === "ECONNRESET") return `the connection to ${where} was reset`;
  return `cannot reach ${where}: ${oneLine(error.message)}`;
}

/** The one line for an HTTP error answer: the Status message when the platform sent one. */
export function httpErrorLine(host: string, status: number, statusText: string, body: string): PlatformError {
  try {
    const parsed = JSON.parse(body) as { kind?: string; message?: unknown; reason?: string };
    if (parsed?.kind === "Status" && typeof parsed.message === "string" && parsed.message !== "") {
      return new PlatformError(oneLine(parsed.message), status, parsed.reason);
    }
  } catch {
    // not JSON: not our server (or a proxy in front of it)
  }
  return new PlatformError(
    `${new URL(host).host} answered ${status} ${statusText || ""}`.trim() +
      ", which is not the platform's API (check the URL)",
    status,
  );
}

export interface PlatformClientOptions {
  /** Called with the text of each warning the platform sends (e.g. a reduced ttl); ignored when absent. */
  onWarning?: (text: string) => void;
}

export class PlatformClient {
  readonly login: PlatformLogin;
  private readonly onWarning: (text: string) => void;

  constructor(login: PlatformLogin, options: PlatformClientOptions = {}) {
    this.login = login;
    this.onWarning = options.onWarning ?? (() => {});
  }

  /** A JSON request; resolves to the parsed answer of a 2xx, rejects with a PlatformError otherwise. */
  request<T = unknown>(method: string, path: string, options: RequestOptionsLite = {}): Promise<T> {
    const { host, accessKey, insecure, certificateAuthorityData } = this.login;
    const url = new URL(`${host}${path}`);
    const headers: Record<string, string> = { accept: options.accept ?? "application/json" };
    if (accessKey && !options.anonymous) headers.authorization = `Bearer ${accessKey}`;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) headers["content-type"] = "application/json";
    const tls: RequestOptions = { rejectUnauthorized: !insecure };
    if (certificateAuthorityData) tls.ca = Buffer.from(certificateAuthorityData, "base64").toString("utf8");
    const send = url.protocol === "http:" ? http.request : httpsRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(url, { method, headers, agent: false, timeout: TIMEOUT_MS, ...tls }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", (error) => reject(new PlatformError(networkErrorLine(host, error))));
        res.on("end", () => {
          for (const text of warningTexts(res.headers.warning)) this.onWarning(text);
          const body = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) {
            reject(httpErrorLine(host, status, res.statusMessage ?? "", body));
            return;
          }
          try {
            resolve(JSON.parse(body) as T);
          } catch {
            reject(
              new PlatformError(
                `${url.host} answered with something that is not JSON, so it is not the platform's API (check the URL)`,
              ),
            );
          }
        });
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
      req.on("error", (error: NodeJS.ErrnoException) => reject(new PlatformError(networkErrorLine(host, error))));
      req.end(payload);
    });
  }

  /** POST selves: who the stored key belongs to. */
  self(): Promise<SelfObject> {
    return this.request<SelfObject>("POST", `${API_GROUP_PATH}/selves`, {
      body: { apiVersion: "management.platform.sh/v1", kind: "Self", spec: {} },
    });
  }
}

export interface SelfObject {
  status?: {
    user?: { name: string; username?: string; displayName?: string; teams?: { name: string }[] };
    team?: { name: string; username?: string; displayName?: string };
    accessKey?: string;
    accessKeyType?: string;
    subject?: string;
    platformHost?: string;
    projectNamespacePrefix?: string;
  };
}
