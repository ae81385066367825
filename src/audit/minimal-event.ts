// The event written in place of one that cannot be built: who did what to which object, and the answer's code, so
// no request goes unaudited. It is made of what the server parsed itself (the path, the caller), never of a body.

import { microTime, objectRef } from "./event.ts";
import type { AuditRequest, AuditStage } from "./types.ts";

export const INCOMPLETE_ANNOTATION = "audit.platform.sh/event-incomplete";

/** The stand-in event line (without newline); `code` is the answer's, for the stages that have one. */
export function minimalEventLine(
  stage: AuditStage,
  request: AuditRequest,
  code: number | undefined,
  now: Date,
): string {
  const info = request.requestInfo;
  const event: Record<string, unknown> = {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Metadata",
    auditID: request.id,
    stage,
    requestURI: request.requestUri ?? info.path,
    verb: info.verb,
    user: request.user
      ? { username: request.user.name, groups: request.user.groups }
      : { username: "system:anonymous", groups: ["system:unauthenticated"] },
    impersonatedUser: request.impersonatedUser
      ? { username: request.impersonatedUser.name, groups: request.impersonatedUser.groups }
      : undefined,
    sourceIPs: request.sourceIp ? [request.sourceIp] : [],
    objectRef: objectRef(request),
    responseStatus: code === undefined ? undefined : { metadata: {}, code },
    requestReceivedTimestamp: microTime(request.receivedAt),
    stageTimestamp: microTime(now),
    annotations: { [INCOMPLETE_ANNOTATION]: "the full event could not be built; this one stands in for it" },
  };
  return JSON.stringify(event);
}
