// The landing page, built from what the signed-in user may see: his projects and their virtual clusters with their
// online state (live, through one watch whatever the number of projects: a browser opens six connections a host), his access keys that expire within a week and when this session ends; for admins the
// platform's health (store, replicas, audit, single sign-on), read from what the platform serves.

import {
  Button,
  Card,
  CardBody,
  CardTitle,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  Grid,
  GridItem,
  Label,
  List,
  ListItem,
  PageSection,
  Title,
} from "@patternfly/react-core";
import { type ReactNode, useCallback, useEffect, useMemo, useState } from "react";
import { Empty, ErrorAlert, Loading, TimeAgo } from "../components/common.tsx";
import { InstanceOnline, instancePath, projectPath } from "../components/instances.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { api, fetchText, mgmt } from "../lib/api.ts";
import {
  formatBytes,
  HEALTH_METRICS,
  parseMetrics,
  parseReadyz,
  type ReadyCheck,
  type Replica,
} from "../lib/health.ts";
import type { AccessKey, Instance, Project } from "../lib/kube.ts";
import { Link } from "../lib/router.tsx";
import { type Session, useSession } from "../lib/session.ts";
import { withinDays } from "../lib/time.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const projectOfNamespace = (session: Session, namespace = "") =>
  namespace.startsWith(session.projectNamespacePrefix) ? namespace.slice(session.projectNamespacePrefix.length) : "";

/**
 * Every instance the caller may see, live: one watch across namespaces (the server narrows it to the caller's
 * projects), listed again when the projects it sees change (instances of a project it just joined).
 */
function useInstances(projects: Project[]) {
  const epoch = projects.map((p) => p.metadata.name).join(",");
  return useWatchList<Instance>(mgmt("virtualclusterinstances"), "", epoch);
}

function ProjectsCard({
  session,
  projects,
  instances,
}: {
  session: Session;
  projects: Project[];
  instances: Instance[];
}) {
  const counts = (project: string) => {
    const mine = instances.filter((i) => projectOfNamespace(session, i.metadata.namespace) === project);
    return `${mine.length} virtual cluster${mine.length === 1 ? "" : "s"}, ${mine.filter((i) => i.status?.online).length} online`;
  };
  return (
    <Card isFullHeight>
      <CardTitle component="h2">{session.can("get", "projects") ? "Projects" : "Your projects"}</CardTitle>
      <CardBody>
        {projects.length === 0 ? (
          <Empty
            title="No projects yet"
            body={
              session.can("create", "projects")
                ? "Create a project to hold virtual clusters."
                : "You are not a member of any project. A project's owner or an admin can add you."
            }
            action={session.can("create", "projects") ? <Link to="/projects">Projects</Link> : undefined}
          />
        ) : (
          <List isPlain isBordered>
            {projects.map((project) => {
              const name = project.metadata.name ?? "";
              return (
                <ListItem key={name}>
                  <Link to={projectPath(name)}>{project.spec?.displayName || name}</Link>{" "}
                  <small>({counts(name)})</small>
                </ListItem>
              );
            })}
          </List>
        )}
      </CardBody>
    </Card>
  );
}

function KeysCard({ session, keys }: { session: Session; keys: AccessKey[] }) {
  const soon = keys
    .filter((key) => !key.spec?.disabled && withinDays(key.status?.expirationTimestamp, 7))
    .sort((a, b) => (a.status?.expirationTimestamp ?? "").localeCompare(b.status?.expirationTimestamp ?? ""));
  return (
    <Card isFullHeight>
      <CardTitle component="h2">Access keys</CardTitle>
      <CardBody>
        <p>
          This session ends <TimeAgo value={session.expiresAt} empty="only when you log out" />.
        </p>
        {soon.length === 0 ? (
          <p>No access key of yours expires within a week.</p>
        ) : (
          <SimpleTable
            label="Access keys expiring within a week"
            columns={["Key", "Expires"]}
            rows={soon}
            rowKey={(key) => key.metadata.name ?? ""}
            cells={(key) => [
              key.spec?.displayName || key.metadata.name,
              <TimeAgo key="expires" value={key.status?.expirationTimestamp} />,
            ]}
          />
        )}
        <Link to="/access-keys">Manage access keys</Link>
      </CardBody>
    </Card>
  );
}

function InstancesCard({ session, instances, loading }: { session: Session; instances: Instance[]; loading: boolean }) {
  return (
    <Card>
      <CardTitle component="h2">Virtual clusters</CardTitle>
      <CardBody>
        {loading && instances.length === 0 ? (
          <Loading what="virtual clusters" />
        ) : instances.length === 0 ? (
          <Empty
            title="No virtual clusters yet"
            body="Create one with: virtualcluster create NAME --project PROJECT (a virtual cluster that connects registers itself in its project)."
          />
        ) : (
          <SimpleTable
            label="Virtual clusters"
            columns={["Name", "Project", "Phase", "Online", "Last heartbeat"]}
            rows={instances}
            rowKey={(instance) => `${instance.metadata.namespace}/${instance.metadata.name}`}
            cells={(instance) => {
              const project = projectOfNamespace(session, instance.metadata.namespace);
              const name = instance.metadata.name ?? "";
              return [
                <Link key="name" to={instancePath(project, name)}>
                  {instance.spec?.displayName || name}
                </Link>,
                <Link key="project" to={projectPath(project)}>
                  {project}
                </Link>,
                instance.status?.phase ?? "Pending",
                <InstanceOnline key="online" instance={instance} />,
                <TimeAgo key="heartbeat" value={instance.status?.lastHeartbeatTime} />,
              ];
            }}
          />
        )}
      </CardBody>
    </Card>
  );
}

interface Health {
  checks: ReadyCheck[];
  metrics: Record<string, number>;
  replicas?: { servedBy: string; items: Replica[] };
  audit?: { enabled?: boolean; path?: string };
  login?: { password?: { enabled?: boolean }; connectors?: { id: string; displayName?: string; type?: string }[] };
}

async function loadHealth(session: Session): Promise<Health> {
  const [readyz, metrics, replicas, config, login] = await Promise.all([
    fetchText("/readyz?verbose"),
    session.canGet("/metrics") ? fetchText("/metrics") : undefined,
    fetchText("/platform/replicas"),
    session.can("get", "configs")
      ? api.get<{ status?: { audit?: Health["audit"] } }>(mgmt("configs", "platform-config")).catch(() => undefined)
      : undefined,
    fetchText("/auth/info"),
  ]);
  return {
    checks: parseReadyz(readyz ?? ""),
    metrics: parseMetrics(metrics ?? "", HEALTH_METRICS),
    replicas: replicas ? JSON.parse(replicas) : undefined,
    audit: config?.status?.audit,
    login: login ? JSON.parse(login) : undefined,
  };
}

function CheckLabel({ check }: { check: ReadyCheck }) {
  if (!check.ok) return <Label color="red">{check.name}: failed</Label>;
  if (check.warning) return <Label color="orange">{`${check.name}: ${check.warning}`}</Label>;
  return <Label color="green">{check.name}: ok</Label>;
}

function HealthGroup({ term, children }: { term: string; children: ReactNode }) {
  return (
    <DescriptionListGroup>
      <DescriptionListTerm>{term}</DescriptionListTerm>
      <DescriptionListDescription>{children}</DescriptionListDescription>
    </DescriptionListGroup>
  );
}

function HealthCard({ session }: { session: Session }) {
  const [health, setHealth] = useState<Health>();
  const [error, setError] = useState<unknown>();
  const refresh = useCallback(() => {
    loadHealth(session).then(setHealth, setError);
  }, [session]);
  useEffect(refresh, [refresh]);
  const m = health?.metrics ?? {};
  const store = health?.replicas?.items[0]?.store;
  const auditFailures =
    (m.apiserver_audit_error_total ?? 0) +
    (m.platform_audit_sink_failures_total ?? 0) +
    (m.platform_audit_datastore_failures_total ?? 0);
  return (
    <Card>
      <CardTitle component="h2">Platform health</CardTitle>
      <CardBody>
        <ErrorAlert error={error} title="The platform's health cannot be read" />
        {!health ? (
          <Loading what="the platform's health" />
        ) : (
          <DescriptionList isHorizontal>
            <HealthGroup term="Readiness">
              {health.checks.map((check) => (
                <span key={check.name} className="vcp-check">
                  <CheckLabel check={check} />{" "}
                </span>
              ))}
            </HealthGroup>
            <HealthGroup term="Store">
              {store === "etcd" ? "etcd" : "SQLite (embedded)"}: {formatBytes(m.apiserver_storage_size_bytes)} on disk
              {m.apiserver_storage_quota_bytes ? `, quota ${formatBytes(m.apiserver_storage_quota_bytes)}` : ""}
              {m.apiserver_storage_quota_reached ? " (reached: writes are refused)" : ""}
              {m.apiserver_storage_data_dir_free_bytes !== undefined &&
                `, ${formatBytes(m.apiserver_storage_data_dir_free_bytes)} free on the data directory's disk`}
            </HealthGroup>
            <HealthGroup term="Replicas">
              {health.replicas ? (
                <SimpleTable
                  label="Replicas"
                  columns={["Replica", "Version", "Role", "Last renewed"]}
                  rows={health.replicas.items}
                  rowKey={(replica) => replica.identity}
                  cells={(replica) => [
                    `${replica.identity}${replica.identity === health.replicas?.servedBy ? " (answering)" : ""}`,
                    replica.version,
                    replica.leading ? (
                      <Label key="role" color="blue">
                        Leader
                      </Label>
                    ) : (
                      "Follower"
                    ),
                    <TimeAgo key="renewed" value={replica.renewedAt} />,
                  ]}
                />
              ) : (
                "Not readable"
              )}
            </HealthGroup>
            <HealthGroup term="Audit">
              {health.audit?.enabled ? `On, writing ${health.audit.path ?? "no file"}` : "Off"}
              {m.apiserver_audit_event_total !== undefined && `; ${m.apiserver_audit_event_total} events`}{" "}
              {auditFailures > 0 ? (
                <Label color="red">{`${auditFailures} failures`}</Label>
              ) : (
                <Label color="green">no failures</Label>
              )}
              {(m.platform_audit_datastore_spooled_events ?? 0) > 0 &&
                ` (${m.platform_audit_datastore_spooled_events} events waiting for the datastore)`}
            </HealthGroup>
            <HealthGroup term="Single sign-on">
              Password login {health.login?.password?.enabled === false ? "off" : "on"};{" "}
              {health.login?.connectors?.length
                ? `connectors: ${health.login.connectors.map((c) => `${c.displayName || c.id} (${c.type})`).join(", ")}`
                : "no connectors"}
            </HealthGroup>
          </DescriptionList>
        )}
        <Button variant="link" onClick={refresh}>
          Refresh
        </Button>
      </CardBody>
    </Card>
  );
}

export default function OverviewPage() {
  const session = useSession();
  const projects = useWatchList<Project>(mgmt("projects"));
  const instances = useInstances(projects.items);
  const keys = useWatchList<AccessKey>(
    mgmt("ownedaccesskeys"),
    `fieldSelector=${encodeURIComponent(`spec.user=${session.user}`)}`,
  );
  const admin = session.canGet("/platform/replicas");
  const sorted = useMemo(
    () =>
      [...instances.items].sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
      ),
    [instances.items],
  );
  return (
    <PageSection>
      <Title headingLevel="h1">Overview</Title>
      <p className="vcp-lead">Signed in as {session.displayName || session.username || session.user}.</p>
      <ErrorAlert error={projects.error} title="Projects cannot be listed" />
      <Grid hasGutter>
        <GridItem lg={6}>
          {projects.loading ? (
            <Loading what="projects" />
          ) : (
            <ProjectsCard session={session} projects={projects.items} instances={instances.items} />
          )}
        </GridItem>
        <GridItem lg={6}>
          <KeysCard session={session} keys={keys.items} />
        </GridItem>
        <GridItem span={12}>
          <InstancesCard session={session} instances={sorted} loading={instances.loading || projects.loading} />
        </GridItem>
        {admin && (
          <GridItem span={12}>
            <HealthCard session={session} />
          </GridItem>
        )}
      </Grid>
    </PageSection>
  );
}
