// Whether a browser request comes from the platform's own pages or from another site (CSRF), by what browsers
// send and pages cannot forge: the console's custom header (a page on another site cannot add it without a CORS
// preflight, which the platform never grants), Sec-Fetch-Site, and Origin (sent with every POST). A request with
// none of them is from no browser page at all (curl, a script).

import type { IncomingHttpHeaders } from "node:http";
import { CONSOLE_HEADER } from "../identity/session-cookie.ts";

export type RequestSite = "same-origin" | "cross-site" | "unknown";

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** `ownOrigins`: the platform's origins (https://<host it was reached at>, https://<platformHost>). */
export function requestSite(headers: IncomingHttpHeaders, ownOrigins: readonly string[]): RequestSite {
  const origin = header(headers, "origin");
  const fetchSite = header(headers, "sec-fetch-site");
  if (origin !== undefined && !ownOrigins.includes(origin)) return "cross-site";
  if (fetchSite !== undefined && fetchSite !== "same-origin") return "cross-site";
  if (origin !== undefined || fetchSite === "same-origin" || header(headers, CONSOLE_HEADER)) return "same-origin";
  return "unknown";
}

/** The platform's own origins for a request: the host it was reached at, and the configured platformHost. */
export function ownOrigins(headers: IncomingHttpHeaders, platformOrigin: string): string[] {
  const host = header(headers, "host");
  return host ? [`https://${host}`, platformOrigin] : [platformOrigin];
}
