// Non-resource endpoints: discovery (/api, /apis...), OpenAPI v2/v3, /version, health checks, /metrics and the
// root path list. Documents derive from static definitions, so each is built and serialized once per server.

import { createHash } from "node:crypto";
import { errors } from "../apimachinery/errors.ts";
import {
  aggregatedDiscovery,
  aggregatedDiscoveryContentType,
  aggregatedDiscoveryVersion,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from "./discovery.ts";
import { type HealthCheck, runHealthChecks } from "./health.ts";
import type { ApiMetrics } from "./metrics.ts";
import { negotiateOpenApiV2, negotiateResponse } from "./negotiation.ts";
import { buildOpenApiV2, buildOpenApiV3Document, buildOpenApiV3Index } from "./openapi.ts";
import { encodeOpenApiV2Protobuf, OPENAPI_V2_PROTOBUF_CONTENT_TYPE } from "./openapi-v2-protobuf.ts";
import { parsePretty, type Query, queryValue } from "./query-options.ts";
import type { ResourceIndex } from "./resource-index.ts";
import { warningHeaderValues } from "./warning-headers.ts";

export interface NonResourceResponse {
  code: number;
  body: string | Buffer;
  contentType: string;
  headers?: Record<string, string>;
}

export interface NonResourceRequest {
  method: string;
  path: string;
  query: Query;
  accept: string | undefined;
  ifNoneMatch: string | undefined;
}

export interface NonResourceOptions {
  index: ResourceIndex;
  /** Body of /version; a function when part of it is live (the platform's release channel). */
  version: Record<string, string> | (() => Record<string, string>);
  metrics: ApiMetrics;
  /** Checks per endpoint, in report order. */
  healthChecks: {
    healthz: Map<string, HealthCheck>;
    livez: Map<string, HealthCheck>;
    readyz: Map<string, HealthCheck>;
  };
}

interface CachedDocument {
  value: unknown;
  json: string;
  /** The document as another encoding of the same value (OpenAPI v2 protobuf), served as is. */
  bytes?: Buffer;
  contentType: string;
  etag: string;
}

const HEALTH_ENDPOINTS = new Set(["healthz", "livez", "readyz"]);
const JSON_TYPE = "application/json";

function etagOf(text: string): string {
  return `"${createHash("sha256").update(text).digest("hex").slice(0, 32).toUpperCase()}"`;
}

/** Returns the dispatcher for non-resource paths. */
export function createNonResourceHandler(
  options: NonResourceOptions,
): (request: NonResourceRequest) => Promise<NonResourceResponse> {
  const { index } = options;
  const definitions = index.definitions;
  const cache = new Map<string, CachedDocument | null>();
  const hasCore = index.hasGroupVersion("", "v1");

  /** Builds a document once; `null` from the builder means 404. */
  const cached = (key: string, contentType: string, build: () => unknown): CachedDocument | null => {
    let entry = cache.get(key);
    if (entry === undefined) {
      const value = build();
      if (value === undefined || value === null) entry = null;
      else {
        const json = JSON.stringify(value);
        entry = { value, json, contentType, etag: etagOf(json) };
      }
      cache.set(key, entry);
    }
    return entry;
  };

  // /version: built again only when its body changes (a live field changes on a Config write).
  let lastVersion: { key: string; entry: CachedDocument } | undefined;
  const versionDocument = (): CachedDocument => {
    const { version } = options;
    const value = typeof version === "function" ? version() : version;
    const json = JSON.stringify(value);
    if (lastVersion?.key !== json) {
      lastVersion = { key: json, entry: { value, json, contentType: JSON_TYPE, etag: etagOf(json) } };
    }
    return lastVersion.entry;
  };

  const answer = (request: NonResourceRequest, entry: CachedDocument | null, headers: Record<string, string> = {}) => {
    if (!entry) throw errors.pathNotFound();
    const allHeaders = { ETag: entry.etag, ...headers };
    if (request.ifNoneMatch !== undefined && request.ifNoneMatch === entry.etag) {
      return { code: 304, body: "", contentType: entry.contentType, headers: allHeaders };
    }
    if (entry.bytes) return { code: 200, body: entry.bytes, contentType: entry.contentType, headers: allHeaders };
    const body = parsePretty(request.query) ? `${JSON.stringify(entry.value, null, 2)}\n` : entry.json;
    return { code: 200, body, contentType: entry.contentType, headers: allHeaders };
  };

  const discovery = (request: NonResourceRequest, scope: "api" | "apis"): NonResourceResponse => {
    const aggregated = aggregatedDiscoveryVersion(request.accept);
    if (aggregated) {
      const contentType = aggregatedDiscoveryContentType(aggregated);
      const entry = cached(`${scope}|${aggregated}`, contentType, () =>
        aggregatedDiscovery(definitions, scope, aggregated),
      );
      return answer(request, entry, { Vary: "Accept" });
    }
    negotiateResponse(request.accept);
    if (scope === "api")
      return answer(
        request,
        cached("api", JSON_TYPE, () => (hasCore ? apiVersions() : undefined)),
        { Vary: "Accept" },
      );
    return answer(
      request,
      cached("apis", JSON_TYPE, () => apiGroupList(definitions)),
      { Vary: "Accept" },
    );
  };

  const openApiV3 = (request: NonResourceRequest, rest: string[]): NonResourceResponse => {
    if (rest.length === 0) {
      return answer(
        request,
        cached("openapi/v3", JSON_TYPE, () => buildOpenApiV3Index(definitions, index.groupVersions)),
      );
    }
    let group: string;
    let version: string;
    if (rest.length === 2 && rest[0] === "api") [group, version] = ["", rest[1]];
    else if (rest.length === 3 && rest[0] === "apis") [group, version] = [rest[1], rest[2]];
    else throw errors.pathNotFound();
    if (!index.hasGroupVersion(group, version)) throw errors.pathNotFound();
    let hash = "";
    const entry = cached(`openapi/v3/${group}/${version}`, JSON_TYPE, () => {
      const built = buildOpenApiV3Document(definitions, group, version);
      hash = built.hash;
      return built.document;
    });
    if (entry && hash) entry.etag = `"${hash}"`;
    const requested = queryValue(request.query, "hash");
    const headers: Record<string, string> =
      requested && entry && `"${requested}"` === entry.etag
        ? { "Cache-Control": "public, immutable", Vary: "Accept" }
        : { "Cache-Control": "no-cache, private" };
    return answer(request, entry, headers);
  };

  const openApiV2 = (request: NonResourceRequest): NonResourceResponse => {
    const json = cached("openapi/v2", JSON_TYPE, () => buildOpenApiV2(definitions));
    // Both forms vary by Accept and share the JSON's ETag, as kube-openapi serves them.
    const headers = { Vary: "Accept" };
    if (negotiateOpenApiV2(request.accept) === "json" || !json) return answer(request, json, headers);
    let protobuf = cache.get("openapi/v2 protobuf");
    if (!protobuf) {
      const bytes = encodeOpenApiV2Protobuf(json.value as object);
      protobuf = {
        ...json,
        contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
        bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
      };
      cache.set("openapi/v2 protobuf", protobuf);
    }
    return answer(request, protobuf, headers);
  };

  const health = async (request: NonResourceRequest, endpoint: string, check: string): Promise<NonResourceResponse> => {
    const checks = options.healthChecks[endpoint as "healthz" | "livez" | "readyz"];
    const exclude = request.query.exclude;
    const result = await runHealthChecks(checks, {
      endpoint,
      check,
      verbose: request.query.verbose !== undefined,
      exclude: exclude === undefined ? [] : Array.isArray(exclude) ? exclude : [exclude],
    });
    const headers: Record<string, string> = {
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache, private",
    };
    if (result.warnings) headers.Warning = warningHeaderValues(result.warnings).join(", ");
    return { code: result.code, body: result.body, contentType: "text/plain; charset=utf-8", headers };
  };

  const rootPaths = (): string[] => {
    const paths = ["/apis", "/healthz", "/livez", "/metrics", "/openapi/v2", "/openapi/v3", "/readyz", "/version"];
    if (hasCore) paths.push("/api", "/api/v1");
    for (const { group, version } of index.groupVersions) {
      if (group) paths.push(`/apis/${group}`, `/apis/${group}/${version}`);
    }
    return [...new Set(paths)].sort();
  };

  return async (request) => {
    const parts = request.path.split("/").filter(Boolean);
    const known = isKnownPath(parts, index);
    if (!known) throw errors.pathNotFound();
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw errors.methodNotAllowed();
    }
    const [first, second, third] = parts;
    switch (first) {
      case undefined:
        return answer(
          request,
          cached("/", JSON_TYPE, () => ({ paths: rootPaths() })),
        );
      case "api":
        if (!second) return discovery(request, "api");
        return answer(
          request,
          cached("api/v1", JSON_TYPE, () => apiResourceList(definitions, "", second)),
        );
      case "apis":
        if (!second) return discovery(request, "apis");
        if (!third)
          return answer(
            request,
            cached(`apis/${second}`, JSON_TYPE, () => apiGroup(definitions, second)),
          );
        return answer(
          request,
          cached(`apis/${second}/${third}`, JSON_TYPE, () => apiResourceList(definitions, second, third)),
        );
      case "openapi":
        return second === "v2" ? openApiV2(request) : openApiV3(request, parts.slice(2));
      case "version":
        return answer(request, versionDocument());
      case "metrics":
        return {
          code: 200,
          body: await options.metrics.registry.metrics(),
          contentType: options.metrics.registry.contentType,
        };
      default:
        return health(request, first, second ?? "");
    }
  };
}

/** Paths served here; anything else is the generic 404. */
function isKnownPath(parts: string[], index: ResourceIndex): boolean {
  const [first, second, third] = parts;
  switch (first) {
    case undefined:
      return true;
    case "api":
      return parts.length === 1 || (parts.length === 2 && index.hasGroupVersion("", second));
    case "apis":
      if (parts.length === 1) return true;
      if (parts.length === 2) return index.hasGroup(second) && second !== "";
      return parts.length === 3 && second !== "" && index.hasGroupVersion(second, third);
    case "openapi":
      return second === "v2" ? parts.length === 2 : second === "v3";
    case "version":
    case "metrics":
      return parts.length === 1;
    default:
      return HEALTH_ENDPOINTS.has(first) && parts.length <= 2;
  }
}
