// Audit records described by flat fields, for the property tests of event lines (event.test.ts and
// datastore/event-fields.test.ts).

import type { AuditCompletion, AuditUser } from "./types.ts";

export interface FlatEvent {
  id: string;
  requestUri: string | undefined;
  verb: string;
  resourceRequest: boolean;
  group: string;
  resource: string;
  namespace: string;
  name: string;
  subresource: string;
  user: AuditUser | undefined;
  userAgent: string | undefined;
  sourceIp: string | undefined;
  code: number;
  reason: string | undefined;
  message: string | undefined;
  response: Record<string, unknown> | undefined;
  /** The request's arrival, in milliseconds since the epoch. */
  received: number;
}

/** The completion of the request `c` describes (a GET of /apis/x, version v1, as far as they do not matter). */
export function completionOf(c: FlatEvent): AuditCompletion {
  return {
    id: c.id,
    method: "GET",
    requestUri: c.requestUri,
    requestInfo: {
      resourceRequest: c.resourceRequest,
      verb: c.verb,
      path: "/apis/x",
      group: c.group,
      version: "v1",
      namespace: c.namespace,
      resource: c.resource,
      name: c.name,
      subresource: c.subresource,
    },
    user: c.user,
    userAgent: c.userAgent,
    sourceIp: c.sourceIp,
    receivedAt: new Date(c.received),
    code: c.code,
    reason: c.reason,
    message: c.message,
    responseObject: c.response,
  };
}
