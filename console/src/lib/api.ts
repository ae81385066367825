// Calls to the platform API from the console: same origin, the session cookie, and the console header without which
// the API ignores the cookie (no CSRF). A 401 means the session ended: back to the login page, then here again.

import { fetchWaitingOutBusy } from "./busy-retry.ts";
import { loginPath } from "./return-path.ts";

export const API = "/kubernetes/management/apis/management.platform.sh/v1";
export const CONSOLE_HEADERS = { "X-Platform-Console": "1" };

export interface Status {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

/** A failed API call: the Status the server answered (its message is what forms show). */
export class ApiError extends Error {
  readonly code: number;
  readonly status: Status;
  constructor(code: number, status: Status) {
    super(status.message || `the platform answered ${code}`);
    this.code = code;
    this.status = status;
  }
}

let leaving = false;
/** The page's own action that ends its session when it succeeds (logging out, a new password), while it runs. */
let ending: Promise<unknown> | undefined;

/**
 * Back to the login page, once: several calls failing together (the lists of a page) must not start several
 * navigations, each of which would abort the one before it. While the page's own action may be what ended the
 * session (endingSession), that action says where to go; if it fails, this 401 stands.
 */
export function sessionEnded(): void {
  if (leaving) return;
  if (ending) {
    void ending.catch(() => sessionEnded());
    return;
  }
  leaving = true;
  const here = `${window.location.pathname}${window.location.search}`;
  window.location.assign(loginPath(here));
}

/**
 * Runs `action`, which ends this session when it succeeds (logging out, changing the password: the platform then
 * also ends the page's open watches at once). Meanwhile, and once it succeeded, the page goes where it says itself:
 * a 401 sends nowhere, and live lists stop (sessionOver).
 */
export async function endingSession<T>(action: () => Promise<T>): Promise<T> {
  const run = action();
  ending = run;
  try {
    const result = await run;
    leaving = true;
    return result;
  } finally {
    if (ending === run) ending = undefined;
  }
}

/** Whether this page's session is over: ended, or ended by the page's own action once that succeeds. */
export async function sessionOver(): Promise<boolean> {
  if (ending) await ending.catch(() => undefined);
  return leaving;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Leave a 401 to the caller (the login page). */
  allowUnauthorized?: boolean;
  /** A POST that changes nothing (a review): sent again after a network failure, as reads are. */
  repeatable?: boolean;
}

export async function apiRequest<T = unknown>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...CONSOLE_HEADERS, Accept: "application/json" };
  if (options.body !== undefined) headers["Content-Type"] = options.contentType ?? "application/json";
  const response = await fetchWaitingOutBusy(path, {
    method: options.method ?? "GET",
    headers,
    credentials: "same-origin",
    cache: "no-store", // live data: never from, nor waiting on, the HTTP cache
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
    repeatable: options.repeatable,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { message: text.slice(0, 500) };
  }
  if (!response.ok) {
    if (response.status === 401 && !options.allowUnauthorized) sessionEnded();
    throw new ApiError(response.status, (parsed as Status) ?? {});
  }
  return parsed as T;
}

/** A path of the management API: mgmt("users", name, "password"). */
export function mgmt(...parts: (string | undefined)[]): string {
  return [API, ...parts.filter((p): p is string => !!p).map(encodeURIComponent)].join("/");
}

export const api = {
  get: <T>(path: string) => apiRequest<T>(path),
  create: <T>(path: string, body: unknown) => apiRequest<T>(path, { method: "POST", body }),
  replace: <T>(path: string, body: unknown) => apiRequest<T>(path, { method: "PUT", body }),
  patch: <T>(path: string, body: unknown) =>
    apiRequest<T>(path, { method: "PATCH", body, contentType: "application/merge-patch+json" }),
  remove: <T>(path: string) => apiRequest<T>(path, { method: "DELETE" }),
};

/** The message a form shows for a failed call: the API's Status message, never a blank failure. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.status.message || error.message;
  if (error instanceof Error) return error.message || "the request failed";
  return String(error);
}

/** The text of a non-resource path (/readyz, /metrics), or undefined when the platform refuses it. */
export async function fetchText(path: string): Promise<string | undefined> {
  const response = await fetch(path, { headers: CONSOLE_HEADERS, credentials: "same-origin" });
  // /readyz answers 500 with its report when a check fails: that report is the point.
  return response.status === 200 || response.status === 500 ? response.text() : undefined;
}
