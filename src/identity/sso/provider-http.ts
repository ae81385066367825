// The HTTPS client every connector talks to its provider with: JSON and form requests with a timeout, a size cap,
// the trust the config names (caFile / rootCA / caData PEM, or insecure), and the test-only endpoint override; and
// the same as a `fetch` for the libraries that speak to providers (openid-client, jose's remote key sets).
// Nothing it throws quotes a request or response body: both may carry codes, secrets or tokens.

import { request as httpsRequest } from "node:https";
import { http } from "../../utils/node-http.ts";
import { SsoFailure } from "./types.ts";

const TIMEOUT_MS = 15_000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * TEST ONLY: `VIRTUALCLUSTER_SSO_TEST_ENDPOINTS` is a JSON object mapping a provider's fixed origin (such as
 * https://login.microsoftonline.com) to another origin, so the test suite can stand in for providers whose
 * addresses the config cannot change. Never set it in production.
 */
export const TEST_ENDPOINTS_ENV = "VIRTUALCLUSTER_SSO_TEST_ENDPOINTS";

function testEndpoints(): Record<string, string> {
  const raw = process.env[TEST_ENDPOINTS_ENV];
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** A fixed provider address, moved to the test endpoint when one is set for its origin. */
export function providerUrl(url: string): string {
  const overrides = testEndpoints();
  for (const [from, to] of Object.entries(overrides)) {
    if (url === from || url.startsWith(`${from.replace(/\/+$/, "")}/`))
      return to.replace(/\/+$/, "") + url.slice(from.replace(/\/+$/, "").length);
  }
  return url;
}

export interface ProviderTrust {
  /** PEM certificates to trust instead of the system's. */
  caPem?: string;
  /** Skip certificate verification (the config's insecureCa). */
  insecure?: boolean;
}

export interface ProviderResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface ProviderRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** application/x-www-form-urlencoded body. */
  form?: Record<string, string>;
  /** application/json body. */
  json?: unknown;
  /** A body as it is (its content-type in `headers`). */
  body?: string;
}

/** What the libraries pass to a custom fetch (openid-client's and jose's customFetch). */
export interface FetchOptions {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: unknown;
}

/** Statuses whose answer has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

export class ProviderHttp {
  private readonly trust: ProviderTrust;
  /** Names the provider in errors ("OIDC provider", "SAML identity provider", ...). */
  private readonly label: string;

  constructor(label: string, trust: ProviderTrust = {}) {
    this.label = label;
    this.trust = trust;
  }

  /** A `fetch` through this client: the same trust, limits and test endpoints; no redirects are followed. */
  readonly fetch = async (input: string | URL, init: FetchOptions = {}): Promise<Response> => {
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const answer = await this.send(providerUrl(String(input)), {
      method: init.method === "POST" ? "POST" : init.method === "GET" ? "GET" : undefined,
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
    }
    return new Response(NULL_BODY.has(answer.status) ? null : answer.text, { status: answer.status, headers });
  };

  async send(url: string, options: ProviderRequest = {}): Promise<ProviderResponse> {
    const target = new URL(url);
    const headers: Record<string, string> = { "user-agent": "virtualcluster-platform", ...options.headers };
    let body: string | undefined = options.body;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] = "application/json";
    }
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const where = `${target.origin}${target.pathname}`;
    const request = target.protocol === "https:" ? httpsRequest : http.request;
    return new Promise<ProviderResponse>((resolve, reject) => {
      const req = request(
        target,
        {
          method: options.method ?? (body === undefined ? "GET" : "POST"),
          headers,
          timeout: TIMEOUT_MS,
          ...(target.protocol === "https:"
            ? { ca: this.trust.caPem || undefined, rejectUnauthorized: this.trust.insecure !== true }
            : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy();
              reject(new SsoFailure(`the ${this.label} sent more than 1 MiB from ${where}`));
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          res.on("error", (error) => reject(new SsoFailure(`reading from ${where} failed: ${error.message}`)));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
      req.on("error", (error) =>
        reject(new SsoFailure(`the ${this.label} at ${where} could not be reached: ${error.message}`)),
      );
      req.end(body);
    });
  }

  /** A JSON answer with a 2xx status; anything else is an SsoFailure naming the address and status. */
  async json<T = Record<string, unknown>>(url: string, options: ProviderRequest = {}): Promise<T> {
    const response = await this.send(url, { ...options, headers: { accept: "application/json", ...options.headers } });
    const where = new URL(url);
    if (response.status < 200 || response.status > 299) {
      throw new SsoFailure(
        `the ${this.label} answered ${response.status} at ${where.origin}${where.pathname}${describeError(response.text)}`,
      );
    }
    try {
      return JSON.parse(response.text) as T;
    } catch {
      throw new SsoFailure(`the ${this.label} did not answer JSON at ${where.origin}${where.pathname}`);
    }
  }
}

/** The OAuth error code of an error answer (never its whole body). */
function describeError(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === "string" && /^[\w.-]{1,64}$/.test(body.error)) return ` (${body.error})`;
  } catch {
    // not JSON
  }
  return "";
}
