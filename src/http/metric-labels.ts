// Bounded label values for the request metrics: only served resources and known subresources appear, so
// arbitrary URLs cannot grow the series count.

import type { ResourceDefinition } from "../registry/types.ts";
import type { RequestLabels } from "./metrics.ts";
import type { RequestInfo } from "./request-info.ts";

/** apiserver's metric verb: LIST/WATCH/APPLY where they differ from the HTTP method. */
function metricVerb(method: string, info: RequestInfo | undefined, contentType: string | undefined): string {
  if (info?.resourceRequest) {
    if (info.verb === "list") return "LIST";
    if (info.verb === "watch") return "WATCH";
    if (info.verb === "patch" && contentType?.startsWith("application/apply-patch")) return "APPLY";
  }
  return method;
}

export interface MetricRequest {
  method: string;
  contentType: string | undefined;
  /** Absent when the request failed before its path was parsed. */
  info: RequestInfo | undefined;
  /** The served resource the path names, if any. */
  definition: ResourceDefinition | undefined;
}

export function metricLabels({ method, contentType, info, definition }: MetricRequest): RequestLabels {
  const sub = info?.subresource ?? "";
  const knownSub = definition && (sub === "status" || (sub !== "" && definition.subresources?.[sub] !== undefined));
  return {
    verb: metricVerb(method, info, contentType),
    group: definition?.group ?? "",
    resource: definition?.plural ?? "",
    subresource: knownSub ? sub : "",
  };
}
