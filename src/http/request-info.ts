// Parses a request path into the attributes authorization, audit, metrics and dispatch need, following
// k8s.io/apiserver/pkg/endpoints/request/requestinfo.go so verbs and names match what real servers report.

import { errors } from "../apimachinery/errors.ts";
import { stripPathPrefix } from "./path-prefix.ts";

export interface RequestInfo {
  /** True for /api/v1/... and /apis/<g>/<v>/... paths naming a resource; false for discovery, health, etc. */
  resourceRequest: boolean;
  /** Kubernetes verb for resource requests; the lower-case HTTP method for non-resource requests. */
  verb: string;
  /** Decoded path without query string and without a mount prefix. */
  path: string;
  apiPrefix: "" | "api" | "apis";
  group: string;
  version: string;
  /** Namespace from the path, or the namespace object's own name for /api/v1/namespaces/{name}. */
  namespace: string;
  /** True when the path has the /namespaces/{ns}/<resource> form (a namespaced resource URL). */
  namespacedPath: boolean;
  resource: string;
  /** Object name from the path (not from a field selector). */
  name: string;
  subresource: string;
}

const methodVerbs: Record<string, string> = {
  GET: "get",
  HEAD: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** Subresources of a namespace object itself: /api/v1/namespaces/{ns}/status is the namespace's status. */
const namespaceSubresources = new Set(["status", "finalize"]);

/** Like upstream: watch is on unless the value is a false spelling (a bad value still fails query validation). */
function watchRequested(query: string): boolean {
  if (!query.includes("watch")) return false;
  const value = new URLSearchParams(query).get("watch");
  return (
    value !== null &&
    value !== "false" &&
    value !== "0" &&
    value !== "f" &&
    value !== "F" &&
    value !== "False" &&
    value !== "FALSE"
  );
}

function splitSegments(path: string): string[] {
  const segments = path.split("/").filter((segment) => segment !== "");
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (!segment.includes("%")) continue;
    try {
      segments[i] = decodeURIComponent(segment);
    } catch {
      throw errors.badRequest(`invalid URL escape in path segment ${JSON.stringify(segment)}`);
    }
  }
  return segments;
}

/**
 * Parses `method` and `url` (path plus optional query). `prefixes` are mount prefixes to strip first.
 * Throws a 400 StatusError only for undecodable paths.
 */
export function parseRequestInfo(method: string, url: string, prefixes: readonly string[] = []): RequestInfo {
  const stripped = prefixes.length ? stripPathPrefix(url, prefixes) : url;
  const q = stripped.indexOf("?");
  const rawPath = q === -1 ? stripped : stripped.slice(0, q);
  const query = q === -1 ? "" : stripped.slice(q + 1);
  const parts = splitSegments(rawPath);
  const info: RequestInfo = {
    resourceRequest: false,
    verb: method.toLowerCase(),
    path: `/${parts.join("/")}`,
    apiPrefix: "",
    group: "",
    version: "",
    namespace: "",
    namespacedPath: false,
    resource: "",
    name: "",
    subresource: "",
  };
  // Non-resource: /api/v1 and /apis/<g>/<v> themselves are discovery documents.
  if (parts.length < 3) return info;
  let rest: string[];
  if (parts[0] === "api") {
    rest = parts.slice(1);
  } else if (parts[0] === "apis") {
    if (parts.length < 4) return info;
    info.group = parts[1];
    rest = parts.slice(2);
  } else {
    return info;
  }
  info.apiPrefix = parts[0] as "api" | "apis";
  info.resourceRequest = true;
  info.version = rest[0];
  rest = rest.slice(1);

  let verb: string;
  if (rest[0] === "watch") {
    // Legacy /watch/... form.
    verb = "watch";
    rest = rest.slice(1);
    if (rest.length === 0) {
      info.verb = "";
      return info;
    }
  } else {
    verb = methodVerbs[method] ?? "";
  }

  if (rest[0] === "namespaces") {
    if (rest.length > 1) {
      info.namespace = rest[1];
      if (rest.length > 2 && !namespaceSubresources.has(rest[2])) {
        rest = rest.slice(2);
        info.namespacedPath = true;
      }
    }
  }
  info.resource = rest[0];
  if (rest.length >= 2) info.name = rest[1];
  if (rest.length >= 3) info.subresource = rest[2];
  if (rest.length > 3) {
    // Deeper paths are not served; keep the extra segments in the subresource so dispatch answers 404.
    info.subresource = rest.slice(2).join("/");
  }

  if (verb === "get" && info.name === "") verb = watchRequested(query) ? "watch" : "list";
  else if (verb === "delete" && info.name === "") verb = "deletecollection";
  info.verb = verb;
  return info;
}
