// An object's or a user's audit trail on a detail page: the latest requests the audit datastore holds for a field
// selector, one row per request (its ResponseComplete event), each opening the whole event. Absent for callers who
// may not list audit events.

import { Label, Title } from "@patternfly/react-core";
import { useEffect, useState } from "react";
import { ApiError, api, mgmt } from "../lib/api.ts";
import type { AuditEventObject } from "../lib/audit-events.ts";
import { Link } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { Empty, ErrorAlert, Loading, TimeAgo } from "./common.tsx";
import { SimpleTable } from "./simple-table.tsx";

export interface AuditTrailProps {
  title: string;
  /** Field selector terms of auditevents: "user.username=alice", "objectRef.name=x,objectRef.resource=projects". */
  selector: string;
  /** Accessible name of the table. */
  label: string;
  limit?: number;
}

export function AuditTrail({ title, selector, label, limit = 20 }: AuditTrailProps) {
  const session = useSession();
  const allowed = session.can("list", "auditevents");
  const [events, setEvents] = useState<AuditEventObject[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!allowed) return;
    const query = new URLSearchParams({ limit: String(limit), fieldSelector: `${selector},stage=ResponseComplete` });
    api.get<{ items: AuditEventObject[] }>(`${mgmt("auditevents")}?${query}`).then(
      (list) => setEvents(list.items),
      (failure) => (failure instanceof ApiError && failure.code === 404 ? setEvents([]) : setError(failure)),
    );
  }, [allowed, selector, limit]);
  if (!allowed) return null;
  return (
    <section className="vcp-detail-section">
      <Title headingLevel="h2">{title}</Title>
      <ErrorAlert error={error} title="The audit trail cannot be read" />
      {!events && !error ? (
        <Loading what={title.toLowerCase()} />
      ) : events?.length === 0 ? (
        <Empty title="Nothing recorded" body="The audit datastore holds no request here (audit may be off)." />
      ) : (
        events && (
          <SimpleTable
            label={label}
            columns={["Time", "User", "Verb", "Object", "Code"]}
            rows={events}
            rowKey={(item) => `${item.metadata.name}-${item.event.stage}`}
            cells={(item) => {
              const ref = item.event.objectRef;
              const code = item.event.responseStatus?.code ?? 0;
              return [
                <Link key="time" to={`/audit/${encodeURIComponent(item.metadata.name)}`}>
                  <TimeAgo value={item.metadata.creationTimestamp} />
                </Link>,
                item.event.user?.username,
                item.event.verb,
                `${ref ? [ref.resource, ref.subresource].filter(Boolean).join("/") : item.event.requestURI}${ref?.name ? ` ${ref.name}` : ""}`,
                <Label key="code" isCompact color={code >= 400 ? "red" : "green"}>
                  {String(code)}
                </Label>,
              ];
            }}
          />
        )
      )}
    </section>
  );
}
