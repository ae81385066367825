// Audit: search the audit datastore's events (the auditevents resource) by time, user, verb, resource and name,
// newest first, page by page: one row per request with its stages, the console's own asset requests hidden unless
// asked for, and a page per request with the whole event of each stage (/audit/<auditID>). While the Config has
// audit off, a notice says how to turn it on (events recorded earlier stay searchable); where the platform has no
// auditevents resource, only the notice.

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Checkbox,
  CodeBlock,
  CodeBlockCode,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  Label,
  LabelGroup,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { Empty, ErrorAlert, Loading, TimeAgo } from "../components/common.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { API, ApiError, api, mgmt } from "../lib/api.ts";
import { type AuditEventObject, type AuditRequest, groupRequests, isConsoleAsset } from "../lib/audit-events.ts";
import { Link } from "../lib/router.tsx";

/** Events per page asked of the datastore, and how many pages a search reads to fill one screen of requests. */
const PAGE = 500;
const ROWS = 50;
const MAX_PAGES = 10;

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

type Page = { items: AuditEventObject[]; metadata: { continue?: string } };

/** The requests of `list` a search shows: the console's own asset requests only when asked for. */
const shown = (list: AuditEventObject[], assets: boolean) =>
  groupRequests(list).filter((request) => assets || !isConsoleAsset(request.latest));

async function readPage(filters: Filters, continueToken?: string): Promise<Page> {
  const query = new URLSearchParams({ limit: String(PAGE) });
  const fieldSelector = selector(filters);
  if (fieldSelector) query.set("fieldSelector", fieldSelector);
  if (continueToken) query.set("continue", continueToken);
  return api.get<Page>(`${mgmt("auditevents")}?${query}`);
}

const stageColor = (stage: string | undefined) =>
  stage === "ResponseComplete" ? "green" : stage === "Panic" ? "red" : stage === "RequestReceived" ? "grey" : "blue";

function StageLabels({ request }: { request: AuditRequest }) {
  return (
    <LabelGroup numLabels={4}>
      {request.stages.map((stage) => (
        <Label key={stage.event.stage} isCompact color={stageColor(stage.event.stage)}>
          {stage.event.stage ?? "?"}
        </Label>
      ))}
    </LabelGroup>
  );
}

const objectText = (request: AuditRequest) => {
  const ref = request.latest.objectRef;
  if (!ref) return request.latest.requestURI;
  return [ref.resource, ref.subresource].filter(Boolean).join("/");
};

function RequestTable({ requests }: { requests: AuditRequest[] }) {
  return (
    <SimpleTable
      label="Audit events"
      columns={["Time", "User", "Verb", "Resource", "Name", "Code", "Stages"]}
      rows={requests}
      rowKey={(request) => request.auditID}
      cells={(request) => [
        <Link key="time" to={`/audit/${encodeURIComponent(request.auditID)}`}>
          <TimeAgo value={request.time} />
        </Link>,
        request.latest.user?.username,
        request.latest.verb,
        objectText(request),
        request.latest.objectRef?.name,
        request.latest.responseStatus?.code,
        <StageLabels key="stages" request={request} />,
      ]}
    />
  );
}

/** One request: what it was, its stages, and each stage's whole event. */
function AuditRequestDetail({ auditID }: { auditID: string }) {
  const [events, setEvents] = useState<AuditEventObject[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const query = new URLSearchParams({ fieldSelector: `auditID=${auditID}` });
    api.get<Page>(`${mgmt("auditevents")}?${query}`).then((list) => setEvents(list.items), setError);
  }, [auditID]);
  const request = events?.length ? groupRequests(events)[0] : undefined;
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/audit">Audit</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{auditID}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Request {auditID}</Title>
      <ErrorAlert error={error} title="The request's events cannot be read" />
      {!events && !error ? (
        <Loading what="the request" />
      ) : !request ? (
        <Empty title="No events for this request" body="The audit datastore holds no event with this audit ID." />
      ) : (
        <>
          <p className="vcp-detail-section">
            <strong>{request.latest.user?.username}</strong> {request.latest.verb} {objectText(request)}{" "}
            {request.latest.objectRef?.name} → {request.latest.responseStatus?.code ?? "no answer yet"}
            {request.instance && ` (in virtual cluster ${request.instance})`}
          </p>
          <StageLabels request={request} />
          {request.stages.map((stage) => (
            <section key={stage.event.stage} className="vcp-detail-section">
              <Title headingLevel="h2">
                {stage.event.stage} <TimeAgo value={stage.event.stageTimestamp} />
              </Title>
              <CodeBlock>
                <CodeBlockCode>{JSON.stringify(stage.event, null, 2)}</CodeBlockCode>
              </CodeBlock>
            </section>
          ))}
        </>
      )}
    </PageSection>
  );
}

function AuditSearch() {
  const [available, setAvailable] = useState<boolean>();
  const [auditOn, setAuditOn] = useState<boolean>();
  const [filters, setFilters] = useState<Filters>({ since: "24h", user: "", verb: "", resource: "", name: "" });
  const [events, setEvents] = useState<AuditEventObject[]>();
  const [showAssets, setShowAssets] = useState(false);
  const [next, setNext] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .get<{ resources: { name: string }[] }>(API)
      .then((discovery) => setAvailable(discovery.resources.some((r) => r.name === "auditevents")), setError);
    void auditTurnedOn().then(setAuditOn);
  }, []);

  /** Reads pages until a screen of requests is shown (the console's own requests may fill whole pages). */
  const search = async (continueToken?: string) => {
    setBusy(true);
    setError(undefined);
    try {
      let collected = continueToken ? [...(events ?? [])] : [];
      const before = shown(collected, showAssets).length;
      let token = continueToken;
      for (let page = 0; page < MAX_PAGES; page++) {
        const list = await readPage(filters, token);
        collected = [...collected, ...list.items];
        token = list.metadata.continue || undefined;
        if (!token || shown(collected, showAssets).length - before >= ROWS) break;
      }
      setEvents(collected);
      setNext(token);
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

  const requests = useMemo(() => (events ? shown(events, showAssets) : undefined), [events, showAssets]);
  const hidden = events ? groupRequests(events).length - (requests?.length ?? 0) : 0;

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
                <Button type="submit" isLoading={busy} isDisabled={busy} className="vcp-search-button">
                  Search
                </Button>
              </GridItem>
            </Grid>
            <Checkbox
              id="audit-show-assets"
              label="Show the console's own requests"
              description="Its bundle, branding and page loads, which every visit makes."
              isChecked={showAssets}
              onChange={(_e, on) => setShowAssets(on)}
            />
          </Form>
          {requests === undefined ? (
            <Loading what="audit events" />
          ) : requests.length === 0 ? (
            <Empty
              title="No audit events match"
              body={
                hidden > 0
                  ? `${hidden} requests of the console's own files are hidden. Widen the time range, clear a filter or show them.`
                  : "Widen the time range or clear a filter."
              }
            />
          ) : (
            <>
              <RequestTable requests={requests} />
              {hidden > 0 && <p className="vcp-muted">{hidden} requests of the console's own files hidden.</p>}
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

export default function AuditPage({ rest }: { rest: string[] }) {
  return rest[0] ? <AuditRequestDetail auditID={rest[0]} /> : <AuditSearch />;
}
