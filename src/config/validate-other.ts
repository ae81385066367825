// Checks of the other status blocks beyond the schema: host and prefix, the deprecated OIDC server, apps, secret
// store, cloud maintenance window; cost control (validate-cost-control.ts).

import { isAbsoluteUrl, isHostWithoutScheme, isHttpUrl } from "./formats.ts";
import { parseGoDuration } from "./go-duration.ts";
import { type Problems, read } from "./problems.ts";
import { parseTimeWindow, parseWeekday } from "./time-window.ts";
import { checkCostControl } from "./validate-cost-control.ts";
import type { PathSegment } from "./yaml-source.ts";

const NAMESPACE_PREFIX = /^[a-z0-9]([-a-z0-9]*)?$/;
const CHART = /^[^/\s]+\/[^/\s]+$/;

export function validateTopLevel(config: Record<string, unknown>, p: Problems): void {
  const host = read.string(config, "platformHost");
  if (host && !isHostWithoutScheme(host)) {
    p.invalid(["platformHost"], host, "must be a domain without scheme or path, such as platform.example.com");
  }
  const prefix = read.string(config, "projectNamespacePrefix");
  if (prefix && (!NAMESPACE_PREFIX.test(prefix) || prefix.length > 32)) {
    p.invalid(
      ["projectNamespacePrefix"],
      prefix,
      "must be at most 32 lower case letters, digits or '-', starting with a letter or digit (it starts namespace names)",
    );
  }
}

/** What is wrong with a registered redirect URI of the platform's OpenID provider, if anything. */
function redirectUriProblem(uri: string, wildcard: boolean): string | undefined {
  if (!isAbsoluteUrl(uri)) return "must be an absolute address";
  const url = new URL(uri);
  if (url.hash || uri.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not hold user information";
  if (!uri.includes("*")) return undefined;
  if (!wildcard) return '"*" needs oidc.wildcardRedirect';
  if (url.protocol !== "https:" && url.protocol !== "http:") return 'a redirect with "*" must be http or https';
  if (url.port.includes("*")) return '"*" may stand in the host, path or query, not the port';
  return undefined;
}

export function validateOidcServer(oidc: Record<string, unknown>, p: Problems): void {
  const wildcard = read.bool(oidc, "wildcardRedirect");
  const ids = new Set<string>();
  read.list(oidc, "clients").forEach((client, index) => {
    const at: PathSegment[] = ["oidc", "clients", index];
    const id = read.string(client, "clientId");
    if (!id) p.required([...at, "clientId"]);
    else if (ids.has(id)) p.duplicate([...at, "clientId"], id);
    else ids.add(id);
    for (const [uri, i] of read.strings(client, "redirectURIs")) {
      const problem = redirectUriProblem(uri, wildcard);
      if (problem) p.invalid([...at, "redirectURIs", i], uri, problem);
    }
  });
}

/** A positive Go duration at `at`, if the field is set. */
function checkGoInterval(block: Record<string, unknown>, key: string, at: PathSegment[], p: Problems): void {
  const interval = read.string(block, key);
  if (interval === undefined || interval === "") return;
  const nanos = parseGoDuration(interval);
  if (nanos === undefined) p.invalid(at, interval, 'must be a Go duration such as "30s", "1m" or "1h30m"');
  else if (nanos <= 0n) p.invalid(at, interval, "must be positive");
}

const STORE_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** A path inside the secret store: segments of letters, digits, "_", "." and "-", never "." or "..". */
function checkStorePath(block: Record<string, unknown>, key: string, p: Problems): void {
  const value = read.string(block, key);
  if (!value) return;
  const trimmed = value.replace(/^\/+|\/+$/g, "");
  if (!STORE_PATH.test(trimmed) || trimmed.split("/").some((segment) => segment === "." || segment === "..")) {
    p.invalid(["secretStore", key], value, 'must be a path of letters, digits, "_", "." and "-" segments');
  }
}

export function validateApps(apps: Record<string, unknown>, p: Problems): void {
  checkGoInterval(apps, "refreshInterval", ["apps", "refreshInterval"], p);
  read.list(apps, "repositories").forEach((repository, index) => {
    const at: PathSegment[] = ["apps", "repositories", index];
    const url = read.string(repository, "url");
    if (!url) p.required([...at, "url"]);
    else if (!isAbsoluteUrl(url)) p.invalid([...at, "url"], url, "must be an absolute address");
  });
  read.list(apps, "predefinedApps").forEach((app, index) => {
    const chart = read.string(app, "chart");
    const at: PathSegment[] = ["apps", "predefinedApps", index, "chart"];
    if (!chart) p.required(at);
    else if (!CHART.test(chart)) p.invalid(at, chart, "must have the form repo/chart");
  });
}

export function validateSecretStore(store: Record<string, unknown>, p: Problems): void {
  const address = read.string(store, "address");
  if (address && !isHttpUrl(address))
    p.invalid(["secretStore", "address"], address, "must be an absolute http(s) address");
  checkGoInterval(store, "syncInterval", ["secretStore", "syncInterval"], p);
  checkStorePath(store, "mount", p);
  checkStorePath(store, "pathPrefix", p);
  const ref = read.object(read.object(store, "auth"), "tokenSecretRef");
  if (ref && !read.string(ref, "name")) p.required(["secretStore", "auth", "tokenSecretRef", "name"]);
}

export function validateCloud(cloud: Record<string, unknown>, p: Problems): void {
  const window = read.object(cloud, "maintenanceWindow");
  if (!window) return;
  const at: PathSegment[] = ["cloud", "maintenanceWindow"];
  const day = read.string(window, "dayOfWeek");
  if (!day) p.required([...at, "dayOfWeek"]);
  else if (parseWeekday(day) === undefined)
    p.invalid([...at, "dayOfWeek"], day, "must be a weekday name, Sunday to Saturday");
  const range = read.string(window, "timeWindow");
  if (!range) p.required([...at, "timeWindow"]);
  else {
    const parsed = parseTimeWindow(range);
    if ("error" in parsed) p.invalid([...at, "timeWindow"], range, parsed.error);
  }
}

export function validateCostControl(cost: Record<string, unknown>, p: Problems): void {
  checkCostControl(cost, (path, value, detail) => p.invalid(path, value, detail));
}
