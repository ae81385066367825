// Apps: the chart catalog of the platform Config's repositories (/platform/apps): the predefined apps (with the
// clusters they show on) and, unless noDefault, every chart; an app's readme; and the exact `helm install` command
// for one of the user's virtual clusters (this platform renders no charts itself: helm does, on the user's machine
// or the cluster agent's). Repositories that failed say why.

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
import { api, apiRequest, CONSOLE_HEADERS, mgmt } from "../lib/api.ts";
import { helmInstallCommand } from "../lib/helm-command.ts";
import type { Instance, KubeList } from "../lib/kube.ts";

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

function Install({ app, repository, version }: { app: App; repository?: Repository; version?: string }) {
  const [instances, setInstances] = useState<Instance[]>();
  const [target, setTarget] = useState("");
  const [namespace, setNamespace] = useState("default");
  const [release, setRelease] = useState(app.chart.split("/")[1] ?? "app");
  useEffect(() => {
    api.get<KubeList<Instance>>(mgmt("virtualclusterinstances")).then(
      (list) => {
        const shown = list.items.filter(
          (i) => app.clusters.length === 0 || app.clusters.includes(i.spec?.clusterRef?.cluster ?? ""),
        );
        setInstances(shown);
        if (shown[0]) setTarget(`${shown[0].metadata.namespace}/${shown[0].metadata.name}`);
      },
      () => setInstances([]),
    );
  }, [app.clusters]);
  if (!instances) return <Loading what="your virtual clusters" />;
  if (instances.length === 0 || !repository) {
    return (
      <p>
        No virtual cluster of yours can receive this app
        {app.clusters.length ? ` (shown on ${app.clusters.join(", ")})` : ""}.
      </p>
    );
  }
  const [ns, name] = target.split("/");
  const command = helmInstallCommand({
    release,
    chart: app.chart.split("/")[1] ?? app.chart,
    repositoryUrl: repository.url,
    version,
    namespace,
    project: ns?.startsWith(PREFIX) ? ns.slice(PREFIX.length) : (ns ?? ""),
    instance: name ?? "",
    username: repository.username,
    insecure: repository.insecure,
    values: app.initialValues,
  });
  return (
    <Form onSubmit={(event) => event.preventDefault()}>
      <FormGroup label="Virtual cluster" fieldId="app-target">
        <FormSelect id="app-target" value={target} onChange={(_e, value) => setTarget(value)}>
          {instances.map((i) => (
            <FormSelectOption
              key={`${i.metadata.namespace}/${i.metadata.name}`}
              value={`${i.metadata.namespace}/${i.metadata.name}`}
              label={`${i.metadata.name} (${i.metadata.namespace})`}
            />
          ))}
        </FormSelect>
      </FormGroup>
      <FormGroup label="Namespace" fieldId="app-namespace">
        <TextInput id="app-namespace" value={namespace} onChange={(_e, value) => setNamespace(value)} />
      </FormGroup>
      <FormGroup label="Release name" fieldId="app-release">
        <TextInput id="app-release" value={release} onChange={(_e, value) => setRelease(value)} />
      </FormGroup>
      <p>
        Run this where helm and the virtual cluster's kube context are (<code>virtualcluster connect</code> adds it
        {repository.username ? "; set HELM_REPO_PASSWORD to the repository's password first" : ""}):
      </p>
      <ClipboardCopy isReadOnly isCode variant={ClipboardCopyVariant.expansion} data-testid="helm-command">
        {command}
      </ClipboardCopy>
    </Form>
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
