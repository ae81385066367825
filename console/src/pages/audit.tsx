// Audit: search the audit datastore's events (the auditevents resource) by time, user, verb, resource and name,
// newest first, page by page. While the Config has audit off, a notice says how to turn it on (events recorded
// earlier stay searchable); where the platform has no auditevents resource, only the notice.

import {
  Alert,
  Button,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { Table, Tbody, Td, Th, Thead, Tr } from "@patternfly/react-table";
import { type FormEvent, useEffect, useState } from "react";
import { Empty, ErrorAlert, Loading, TimeAgo } from "../components/common.tsx";
import { API, ApiError, api, mgmt } from "../lib/api.ts";
import { Link } from "../lib/router.tsx";

interface AuditEventObject {
  metadata: { name: string; creationTimestamp?: string };
  event: {
    auditID?: string;
    verb?: string;
    user?: { username?: string };
    objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string };
    responseStatus?: { code?: number };
    requestURI?: string;
  };
}

interface Filters {
  since: string;
  user: string;
  verb: string;
  resource: string;
  name: string;
}

const selector = (filters: Filters) =>
  [
    filters.since && `since=${filters.since}`,
    filters.user && `user.username=${filters.user}`,
    filters.verb && `verb=${filters.verb}`,
    filters.resource && `objectRef.resource=${filters.resource}`,
    filters.name && `objectRef.name=${filters.name}`,
  ]
    .filter(Boolean)
    .join(",");

interface AuditStatus {
  status?: { audit?: { enabled?: boolean; path?: string } };
}

/** Whether the Config turns audit on (the datastore records only then); undefined when the Config cannot be read. */
async function auditTurnedOn(): Promise<boolean | undefined> {
  try {
    const config = await api.get<AuditStatus>(mgmt("configs", "platform-config"));
    return config.status?.audit?.enabled === true && Boolean(config.status.audit.path);
  } catch (failure) {
    if (failure instanceof ApiError && failure.code === 404) return false;
    return undefined;
  }
}

export default function AuditPage() {
  const [available, setAvailable] = useState<boolean>();
  const [auditOn, setAuditOn] = useState<boolean>();
  const [filters, setFilters] = useState<Filters>({ since: "24h", user: "", verb: "", resource: "", name: "" });
  const [events, setEvents] = useState<AuditEventObject[]>();
  const [next, setNext] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .get<{ resources: { name: string }[] }>(API)
      .then((discovery) => setAvailable(discovery.resources.some((r) => r.name === "auditevents")), setError);
    void auditTurnedOn().then(setAuditOn);
  }, []);

  const search = async (continueToken?: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const query = new URLSearchParams({ limit: "50" });
      const fieldSelector = selector(filters);
      if (fieldSelector) query.set("fieldSelector", fieldSelector);
      if (continueToken) query.set("continue", continueToken);
      const list = await api.get<{ items: AuditEventObject[]; metadata: { continue?: string } }>(
        `${mgmt("auditevents")}?${query}`,
      );
      setEvents(continueToken ? [...(events ?? []), ...list.items] : list.items);
      setNext(list.metadata.continue || undefined);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: the first search runs once the datastore is known
  useEffect(() => {
    if (available) void search();
  }, [available]);

  const field = (name: keyof Filters, label: string) => (
    <FormGroup label={label} fieldId={`audit-${name}`}>
      <TextInput
        id={`audit-${name}`}
        value={filters[name]}
        onChange={(_e, value) => setFilters({ ...filters, [name]: value })}
      />
    </FormGroup>
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void search();
  };

  if (available === undefined && !error) return <Loading what="audit" />;
  return (
    <PageSection>
      <Title headingLevel="h1">Audit</Title>
      <ErrorAlert error={error} title="Audit events cannot be searched" />
      {(available === false || auditOn === false) && (
        <Alert variant="info" isInline title="Audit is off">
          Requests are recorded, and searchable here, once the <Link to="/config">Config</Link> sets{" "}
          <code>audit.enabled: true</code> with <code>audit.path</code> (the audit log file); the events are kept in the
          audit datastore for <code>audit.dataStoreTTL</code> hours (30 days by default).
          {available && " Events recorded while audit was on stay searchable below."}
        </Alert>
      )}
      {available && (
        <>
          <Form onSubmit={submit} aria-label="Search audit events">
            <Grid hasGutter md={4} lg={2}>
              <GridItem>
                <FormGroup label="Time" fieldId="audit-since">
                  <FormSelect
                    id="audit-since"
                    value={filters.since}
                    onChange={(_e, since) => setFilters({ ...filters, since })}
                  >
                    <FormSelectOption value="15m" label="Last 15 minutes" />
                    <FormSelectOption value="1h" label="Last hour" />
                    <FormSelectOption value="24h" label="Last day" />
                    <FormSelectOption value="7d" label="Last week" />
                    <FormSelectOption value="" label="Any time" />
                  </FormSelect>
                </FormGroup>
              </GridItem>
              <GridItem>{field("user", "User")}</GridItem>
              <GridItem>{field("verb", "Verb")}</GridItem>
              <GridItem>{field("resource", "Resource")}</GridItem>
              <GridItem>{field("name", "Name")}</GridItem>
              <GridItem>
                <Button type="submit" isLoading={busy} isDisabled={busy} style={{ marginTop: "1.75rem" }}>
                  Search
                </Button>
              </GridItem>
            </Grid>
          </Form>
          {events === undefined ? (
            <Loading what="audit events" />
          ) : events.length === 0 ? (
            <Empty title="No audit events match" body="Widen the time range or clear a filter." />
          ) : (
            <>
              <Table aria-label="Audit events" variant="compact">
                <Thead>
                  <Tr>
                    <Th>Time</Th>
                    <Th>User</Th>
                    <Th>Verb</Th>
                    <Th>Resource</Th>
                    <Th>Name</Th>
                    <Th>Code</Th>
                  </Tr>
                </Thead>
                <Tbody>
                  {events.map((item) => (
                    <Tr key={item.metadata.name}>
                      <Td dataLabel="Time">
                        <TimeAgo value={item.metadata.creationTimestamp} />
                      </Td>
                      <Td dataLabel="User">{item.event.user?.username}</Td>
                      <Td dataLabel="Verb">{item.event.verb}</Td>
                      <Td dataLabel="Resource">{item.event.objectRef?.resource ?? item.event.requestURI}</Td>
                      <Td dataLabel="Name">{item.event.objectRef?.name}</Td>
                      <Td dataLabel="Code">{item.event.responseStatus?.code}</Td>
                    </Tr>
                  ))}
                </Tbody>
              </Table>
              {next && (
                <Button variant="secondary" onClick={() => void search(next)} isLoading={busy}>
                  Load more
                </Button>
              )}
            </>
          )}
        </>
      )}
    </PageSection>
  );
}
