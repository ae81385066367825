// Response media type negotiation (the Accept header), modelled on apiserver's negotiation package:
// ranges are tried by q-value, the first one we can serve wins, nothing servable -> 406.

import { errors } from "../apimachinery/errors.ts";
import { OPENAPI_V2_PROTOBUF_TYPES } from "./openapi-v2-protobuf.ts";

export type ResponseFormat = { kind: "json" } | { kind: "yaml" } | { kind: "table"; version: "v1" | "v1beta1" };

export interface NegotiationOptions {
  /** Table output is possible (reads of a main resource). */
  table?: boolean;
  /** The response is a watch stream: only JSON framing is available. */
  stream?: boolean;
}

export const JSON_FORMAT: ResponseFormat = { kind: "json" };
export const YAML_FORMAT: ResponseFormat = { kind: "yaml" };
const TABLE_V1: ResponseFormat = { kind: "table", version: "v1" };
const TABLE_V1BETA1: ResponseFormat = { kind: "table", version: "v1beta1" };

/** Media types named in the 406 message. */
export const SERVED_MEDIA_TYPES = ["application/json", "application/yaml"] as const;

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

/** Splits an Accept header into media ranges with lower-cased type and parameters. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const item of header.split(",")) {
    const pieces = item.split(";");
    const type = pieces[0].trim().toLowerCase();
    if (!type) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (let i = 1; i < pieces.length; i++) {
      const eq = pieces[i].indexOf("=");
      if (eq === -1) continue;
      const key = pieces[i].slice(0, eq).trim().toLowerCase();
      const value = pieces[i]
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1");
      if (key === "q") {
        const parsed = Number(value);
        q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 0;
      } else {
        params[key] = value;
      }
    }
    ranges.push({ type, params, q });
  }
  // Stable sort keeps the client's order among equal q-values.
  return ranges.sort((a, b) => b.q - a.q);
}

function formatFor(range: MediaRange, options: NegotiationOptions): ResponseFormat | undefined {
  if (range.q <= 0) return undefined;
  const as = range.params.as;
  if (as !== undefined) {
    if (as !== "Table" || !options.table || range.type !== "application/json") return undefined;
    if (range.params.g !== "meta.k8s.io") return undefined;
    if (range.params.v === "v1") return TABLE_V1;
    if (range.params.v === "v1beta1") return TABLE_V1BETA1;
    return undefined;
  }
  switch (range.type) {
    case "application/json":
    case "application/*":
    case "*/*":
      return JSON_FORMAT;
    case "application/yaml":
      return options.stream ? undefined : YAML_FORMAT;
    default:
      return undefined;
  }
}

/** Picks the response format; a missing or empty Accept means JSON. Throws 406 when nothing fits. */
export function negotiateResponse(accept: string | undefined, options: NegotiationOptions = {}): ResponseFormat {
  // Fast path for the common headers.
  if (accept === undefined || accept === "" || accept === "application/json" || accept === "*/*") return JSON_FORMAT;
  for (const range of parseAccept(accept)) {
    const format = formatFor(range, options);
    if (format) return format;
  }
  throw errors.notAcceptable(SERVED_MEDIA_TYPES);
}

/**
 * The form of /openapi/v2 to answer, as kube-openapi picks it: ranges in order of preference, JSON before protobuf
 * for a wildcard. kubectl 1.27 and 1.28 ask for protobuf only. Throws 406 when nothing fits.
 */
export function negotiateOpenApiV2(accept: string | undefined): "json" | "protobuf" {
  if (accept === undefined || accept === "") return "json";
  for (const range of parseAccept(accept)) {
    if (range.q <= 0) continue;
    if ((OPENAPI_V2_PROTOBUF_TYPES as readonly string[]).includes(range.type)) return "protobuf";
    if (formatFor(range, {})) return "json";
  }
  throw errors.notAcceptable([...SERVED_MEDIA_TYPES, ...OPENAPI_V2_PROTOBUF_TYPES]);
}
