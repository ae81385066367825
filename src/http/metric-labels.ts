// Bounded label values for the request metrics: only served resources and known subresources appear, so
// arbitrary URLs cannot grow the series count.

import type { FastifyRequest } from "fastify";
import type { RequestLabels } from "./metrics.ts";
import type { RequestInfo } from "./request-info.ts";
import type { RequestState } from "./request-state.ts";

/** apiserver's metric verb: LIST/WATCH/APPLY where they differ from the HTTP method. */
function metricVerb(method: string, info: RequestInfo | undefined, contentType: string | undefined): string {
  if (info?.resourceRequest) {
    if (info.verb === "list") return "LIST";
    if (info.verb === "watch") return "WATCH";
    if (info.verb === "patch" && contentType?.startsWith("application/apply-patch")) return "APPLY";
  }
  return method;
}

export function metricLabels(request: FastifyRequest, state: RequestState | undefined): RequestLabels {
  const info = state?.info;
  const definition = state?.store?.definition;
  const sub = info?.subresource ?? "";
  const knownSub = definition && (sub === "status" || (sub !== "" && definition.subresources?.[sub] !== undefined));
  return {
    verb: metricVerb(request.method, info, request.headers["content-type"]),
    group: definition?.group ?? "",
    resource: definition?.plural ?? "",
    subresource: knownSub ? sub : "",
  };
}
