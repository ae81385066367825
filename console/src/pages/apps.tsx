// Apps: the chart catalog of the platform Config's repositories (/platform/apps): the predefined apps (with the
// clusters they show on) and, unless noDefault, every chart; an app's readme; and installing it into one of the
// user's virtual clusters or spaces: where the target's cluster agent has helm (a dry-run create of the HelmRelease
// says so), as a HelmRelease the agent installs; elsewhere the exact `helm install` command to run (the platform
// itself renders no charts). Repositories that failed say why.

import {
  Alert,
  Button,
  ClipboardCopy,
  ClipboardCopyVariant,
  Form,
  FormGroup,
  FormSelect,
  FormSelectOption,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useEffect, useMemo, useState } from "react";
import { ErrorAlert, Loading } from "../components/common.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { api, apiRequest, CONSOLE_HEADERS, errorMessage, mgmt } from "../lib/api.ts";
import { helmInstallCommand } from "../lib/helm-command.ts";
import type { HelmRelease, Instance, KubeList, SpaceInstance } from "../lib/kube.ts";

interface App {
  chart: string;
  repository: string;
  title: string;
  description?: string;
  version?: string;
  versions: string[];
  initialValues?: string;
  clusters: string[];
  predefined: boolean;
  missing?: boolean;
}

interface Repository {
  name: string;
  url: string;
  username?: string;
  insecure: boolean;
  charts: number;
  refreshedTime?: string;
  error?: string;
}

interface Catalog {
  repositories: Repository[];
  apps: App[];
}

const PREFIX = "p-";

function Readme({ app, version }: { app: App; version?: string }) {
  const [text, setText] = useState<string>();
  const [state, setState] = useState<"loading" | "none" | "ready">("loading");
  useEffect(() => {
    setState("loading");
    const query = `chart=${encodeURIComponent(app.chart)}${version ? `&version=${encodeURIComponent(version)}` : ""}`;
    fetch(`/platform/apps/readme?${query}`, { headers: CONSOLE_HEADERS, credentials: "same-origin" }).then(
      async (response) => {
        if (response.ok) {
          setText(await response.text());
          setState("ready");
        } else setState("none");
      },
      () => setState("none"),
    );
  }, [app.chart, version]);
  if (state === "loading") return <Loading what="the readme" />;
  if (state === "none") return <p>This chart has no readme.</p>;
  return (
    <pre className="vcp-readme" data-testid="app-readme">
      {text}
    </pre>
  );
}

/** A place an app can go: one of the user's virtual clusters or spaces. */
interface Target {
  key: string;
  kind: "virtualClusterInstance" | "space";
  namespace: string;
  name: string;
}

async function loadTargets(app: App): Promise<Target[]> {
  const [instances, spaces] = await Promise.all([
    api.get<KubeList<Instance>>(mgmt("virtualclusterinstances")).then(
      (list) => list.items,
      () => [] as Instance[],
    ),
    api.get<KubeList<SpaceInstance>>(mgmt("spaceinstances")).then(
      (list) => list.items,
      () => [] as SpaceInstance[],
    ),
  ]);
  const shownOn = (cluster?: string) => app.clusters.length === 0 || app.clusters.includes(cluster ?? "");
  const target = (kind: Target["kind"], object: Instance | SpaceInstance): Target => ({
    key: `${kind}:${object.metadata.namespace}/${object.metadata.name}`,
    kind,
    namespace: object.metadata.namespace ?? "",
    name: object.metadata.name ?? "",
  });
  return [
    ...instances.filter((i) => shownOn(i.spec?.clusterRef?.cluster)).map((i) => target("virtualClusterInstance", i)),
    ...spaces.filter((s) => shownOn(s.spec?.clusterRef?.cluster)).map((s) => target("space", s)),
  ];
}

/** The HelmRelease that installs the app into the target. */
function helmRelease(app: App, target: Target, release: string, namespace: string, version?: string) {
  const [repository, chart] = app.chart.split("/");
  return {
    apiVersion: "management.platform.sh/v1",
    kind: "HelmRelease",
    metadata: { name: release },
    spec: {
      chart: { repository: app.repository || repository, name: chart ?? app.chart, version },
      target:
        target.kind === "space"
          ? { space: target.name }
          : { virtualClusterInstance: target.name, namespace: namespace || "default" },
      values: app.initialValues,
    },
  };
}

/**
 * Whether the target's agent installs apps: the platform answers a dry-run create of the HelmRelease (a 422 says
 * its agent has no helm, or no agent runs it; a 403 that the user may not install here).
 */
function useAgentInstalls(body: ReturnType<typeof helmRelease>, target: Target): { agent?: boolean; why?: string } {
  const [answer, setAnswer] = useState<{ agent?: boolean; why?: string }>({});
  const text = JSON.stringify(body);
  useEffect(() => {
    setAnswer({});
    const path = `${mgmt("namespaces", target.namespace, "helmreleases")}?dryRun=All`;
    api.create(path, JSON.parse(text)).then(
      () => setAnswer({ agent: true }),
      (error: unknown) => setAnswer({ agent: false, why: errorMessage(error) }),
    );
  }, [text, target.namespace]);
  return answer;
}

/** Creates the HelmRelease and follows it until the agent installed it or said why not. */
function InstallWithAgent({ body, target }: { body: ReturnType<typeof helmRelease>; target: Target }) {
  const [created, setCreated] = useState<HelmRelease>();
  const [error, setError] = useState<unknown>();
  const path = mgmt("namespaces", target.namespace, "helmreleases", body.metadata.name);
  useEffect(() => {
    if (!created || created.status?.phase === "Deployed" || created.status?.phase === "Failed") return;
    const timer = setTimeout(() => api.get<HelmRelease>(path).then(setCreated, setError), 2000);
    return () => clearTimeout(timer);
  }, [created, path]);
  const install = () => {
    setError(undefined);
    api.create<HelmRelease>(mgmt("namespaces", target.namespace, "helmreleases"), body).then(setCreated, setError);
  };
  const ready = created?.status?.conditions?.find((c) => c.type === "Ready");
  return (
    <>
      <p>
        The agent of this {target.kind === "space" ? "space" : "virtual cluster"}'s cluster installs apps with helm: the
        platform keeps the app as the HelmRelease <code>{body.metadata.name}</code> in <code>{target.namespace}</code>.
      </p>
      <Button variant="primary" onClick={install} isDisabled={Boolean(created)} data-testid="install-app">
        Install
      </Button>
      {error !== undefined && (
        <Alert isInline variant="danger" title="The app was not installed">
          {errorMessage(error)}
        </Alert>
      )}
      {created && (
        <p data-testid="install-state">
          {created.status?.phase ?? "Pending"}
          {created.status?.revision ? `, revision ${created.status.revision}` : ""}
          {ready?.message ? `: ${ready.message}` : ""}
        </p>
      )}
    </>
  );
}

function Install({ app, repository, version }: { app: App; repository?: Repository; version?: string }) {
  const [targets, setTargets] = useState<Target[]>();
  const [key, setKey] = useState("");
  const [namespace, setNamespace] = useState("default");
  const [release, setRelease] = useState(app.chart.split("/")[1] ?? "app");
  useEffect(() => {
    loadTargets(app).then((found) => {
      setTargets(found);
      setKey(found[0]?.key ?? "");
    });
  }, [app]);
  if (!targets) return <Loading what="your virtual clusters and spaces" />;
  if (targets.length === 0 || !repository) {
    return (
      <p>
        No virtual cluster of yours can receive this app
        {app.clusters.length ? ` (shown on ${app.clusters.join(", ")})` : ""}.
      </p>
    );
  }
  const target = targets.find((t) => t.key === key) ?? targets[0];
  return (
    <Form onSubmit={(event) => event.preventDefault()}>
      <FormGroup label="Virtual cluster or space" fieldId="app-target">
        <FormSelect id="app-target" value={target.key} onChange={(_e, value) => setKey(value)}>
          {targets.map((t) => (
            <FormSelectOption
              key={t.key}
              value={t.key}
              label={`${t.kind === "space" ? "space " : ""}${t.name} (${t.namespace})`}
            />
          ))}
        </FormSelect>
      </FormGroup>
      {target.kind === "virtualClusterInstance" && (
        <FormGroup label="Namespace" fieldId="app-namespace">
          <TextInput id="app-namespace" value={namespace} onChange={(_e, value) => setNamespace(value)} />
        </FormGroup>
      )}
      <FormGroup label="Release name" fieldId="app-release">
        <TextInput id="app-release" value={release} onChange={(_e, value) => setRelease(value)} />
      </FormGroup>
      <InstallChoice {...{ app, repository, version, target, release, namespace }} />
    </Form>
  );
}

/** Install through the target's agent where it has helm; elsewhere the exact helm command. */
function InstallChoice(props: {
  app: App;
  repository: Repository;
  version?: string;
  target: Target;
  release: string;
  namespace: string;
}) {
  const { app, repository, version, target, release, namespace } = props;
  const body = helmRelease(app, target, release, namespace, version);
  const { agent, why } = useAgentInstalls(body, target);
  if (agent === undefined) return <Loading what="whether the cluster's agent installs apps" />;
  if (agent) return <InstallWithAgent key={`${target.key}/${release}`} body={body} target={target} />;
  if (target.kind === "space") {
    return <p>The agent of this space's cluster cannot install it: {why}</p>;
  }
  const project = target.namespace.startsWith(PREFIX) ? target.namespace.slice(PREFIX.length) : target.namespace;
  const command = helmInstallCommand({
    release,
    chart: app.chart.split("/")[1] ?? app.chart,
    repositoryUrl: repository.url,
    version,
    namespace,
    project,
    instance: target.name,
    username: repository.username,
    insecure: repository.insecure,
    values: app.initialValues,
  });
  return (
    <>
      <p>
        Run this where helm and the virtual cluster's kube context are (<code>virtualcluster connect</code> adds it
        {repository.username ? "; set HELM_REPO_PASSWORD to the repository's password first" : ""}):
      </p>
      <ClipboardCopy isReadOnly isCode variant={ClipboardCopyVariant.expansion} data-testid="helm-command">
        {command}
      </ClipboardCopy>
    </>
  );
}

export default function AppsPage() {
  const [catalog, setCatalog] = useState<Catalog>();
  const [error, setError] = useState<unknown>();
  const [selected, setSelected] = useState<string>();
  const [version, setVersion] = useState<string>();
  useEffect(() => {
    apiRequest<Catalog>("/platform/apps").then(setCatalog, setError);
  }, []);
  const app = useMemo(() => catalog?.apps.find((a) => a.chart === selected), [catalog, selected]);
  if (error) return <ErrorAlert error={error} title="The apps catalog is not available" />;
  if (!catalog) return <Loading what="the apps catalog" />;
  return (
    <PageSection>
      <Title headingLevel="h1">Apps</Title>
      {catalog.repositories
        .filter((r) => r.error)
        .map((r) => (
          <Alert key={r.name} isInline variant="warning" title={`Repository ${r.name} could not be read`}>
            {r.error}
          </Alert>
        ))}
      {catalog.apps.length === 0 ? (
        <p>No apps: add chart repositories (apps.repositories) and predefined apps to the platform Config.</p>
      ) : (
        <SimpleTable
          label="Apps"
          columns={["App", "Chart", "Version", "Shown on", ""]}
          rows={catalog.apps}
          rowKey={(a) => a.chart}
          cells={(a) => [
            a.title,
            a.chart,
            a.missing ? "not in the repository" : (a.version ?? ""),
            a.clusters.length ? a.clusters.join(", ") : "all clusters",
            <Button
              key="open"
              variant="link"
              onClick={() => {
                setSelected(a.chart);
                setVersion(a.version);
              }}
            >
              Details
            </Button>,
          ]}
        />
      )}
      {app && (
        <section className="vcp-app" aria-label={app.title}>
          <Title headingLevel="h2">{app.title}</Title>
          {app.description && <p>{app.description}</p>}
          {app.versions.length > 0 && (
            <FormGroup label="Version" fieldId="app-version">
              <FormSelect id="app-version" value={version ?? ""} onChange={(_e, value) => setVersion(value)}>
                {app.versions.map((v) => (
                  <FormSelectOption key={v} value={v} label={v} />
                ))}
              </FormSelect>
            </FormGroup>
          )}
          <Title headingLevel="h3">Install</Title>
          <Install
            app={app}
            repository={catalog.repositories.find((r) => r.name === app.repository)}
            version={version}
          />
          <Title headingLevel="h3">Readme</Title>
          <Readme app={app} version={version} />
        </section>
      )}
    </PageSection>
  );
}
