// Connected clusters: the ones the caller may list (phase, online, Kubernetes version, last heartbeat, spaces and
// virtual clusters on it, how to reach it with kubectl), and self-service: create a virtual cluster for one of your
// projects on a cluster you may use. The platform checks both (the project allows the cluster, you may use it) and
// has the cluster's agent run it; the form shows the API's refusal in place.

import {
  Alert,
  Button,
  ClipboardCopy,
  FormSelect,
  FormSelectOption,
  Label,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useEffect, useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged } from "../components/common.tsx";
import { Field, missing } from "../components/form.tsx";
import { FormModal, ResourceList } from "../components/resource-list.tsx";
import { ApiError, api, mgmt } from "../lib/api.ts";
import type { Cluster, KubeList, Project } from "../lib/kube.ts";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const V1 = "management.platform.sh/v1";

/** The clusters a project allows by name; undefined when it allows every cluster. */
const allowedBy = (project: Project | undefined) => {
  const names = (project?.spec?.allowedClusters ?? []).map((c) => c.name);
  return names.length === 0 || names.includes("*") ? undefined : names;
};

function CreateVirtualCluster({
  clusters,
  onClose,
  onCreated,
}: {
  clusters: string[];
  onClose: () => void;
  onCreated: (created: { project: string; name: string; cluster: string }) => void;
}) {
  const session = useSession();
  // The projects you may see: "loading" until the list answers (the choice waits for it, so a list that answers late
  // cannot replace what was chosen), undefined without the right to list them (the project is then typed in).
  const [projects, setProjects] = useState<Project[] | "loading" | undefined>("loading");
  const [project, setProject] = useState("");
  const [cluster, setCluster] = useState(clusters[0] ?? "");
  const [name, setName] = useState("");
  useEffect(() => {
    api.get<KubeList<Project>>(mgmt("projects")).then(
      (list) => {
        setProjects(list.items);
        setProject((typed) => typed || (list.items[0]?.metadata.name ?? ""));
      },
      () => setProjects(undefined),
    );
  }, []);
  const listed = Array.isArray(projects) ? projects : undefined;
  const chosen = listed?.find((p) => p.metadata.name === project);
  const candidates = allowedBy(chosen) ?? clusters;
  const submit = async () => {
    await api.create(mgmt("namespaces", `${session.projectNamespacePrefix}${project}`, "virtualclusterinstances"), {
      apiVersion: V1,
      kind: "VirtualClusterInstance",
      metadata: { name },
      spec: { displayName: name, clusterRef: { cluster } },
    });
    onCreated({ project, name, cluster });
    return undefined;
  };
  return (
    <FormModal
      title="Create Virtual Cluster"
      id="create-virtual-cluster"
      submitLabel="Create"
      failure="The virtual cluster was not created"
      validate={() =>
        missing([
          ["vc-project", project, "Project"],
          ["vc-cluster", cluster, "Cluster"],
          ["vc-name", name, "Name"],
        ])
      }
      fieldOf={(field) => ({ "metadata.name": "vc-name", "spec.clusterRef.cluster": "vc-cluster" })[field]}
      onSubmit={submit}
      onClose={onClose}
    >
      <Field id="vc-project" label="Project" isRequired>
        {projects === "loading" ? (
          <FormSelect id="vc-project" value="" isDisabled aria-busy>
            <FormSelectOption value="" label="Loading projects…" isPlaceholder />
          </FormSelect>
        ) : listed ? (
          <FormSelect id="vc-project" value={project} onChange={(_e, v) => setProject(v)}>
            {listed.map((p) => (
              <FormSelectOption
                key={p.metadata.name}
                value={p.metadata.name}
                label={p.spec?.displayName || p.metadata.name || ""}
              />
            ))}
          </FormSelect>
        ) : (
          <TextInput id="vc-project" isRequired value={project} onChange={(_e, v) => setProject(v)} />
        )}
      </Field>
      <Field
        id="vc-cluster"
        label="Cluster"
        isRequired
        helper="A cluster the project allows and you may use; its agent runs the virtual cluster."
      >
        {candidates.length ? (
          <FormSelect id="vc-cluster" value={cluster} onChange={(_e, v) => setCluster(v)}>
            {!candidates.includes(cluster) && <FormSelectOption value="" label="Choose a cluster" isPlaceholder />}
            {candidates.map((c) => (
              <FormSelectOption key={c} value={c} label={c} />
            ))}
          </FormSelect>
        ) : (
          <TextInput id="vc-cluster" isRequired value={cluster} onChange={(_e, v) => setCluster(v)} />
        )}
      </Field>
      <Field id="vc-name" label="Name" isRequired>
        <TextInput id="vc-name" isRequired value={name} onChange={(_e, v) => setName(v)} />
      </Field>
    </FormModal>
  );
}

export default function ClustersPage() {
  const clusters = useWatchList<Cluster>(mgmt("clusters"));
  const paged = usePaged(clusters.items, (c) => `${c.metadata.name} ${c.spec?.displayName}`);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ project: string; name: string; cluster: string }>();
  // Listing clusters is for those who manage them; anybody may still create a virtual cluster on one they may use.
  const forbidden = clusters.error instanceof ApiError && clusters.error.code === 403;
  const create = (
    <Button variant="primary" onClick={() => setCreating(true)}>
      Create Virtual Cluster
    </Button>
  );
  return (
    <PageSection>
      <Title headingLevel="h1">Clusters</Title>
      <ListToolbar label="clusters" paged={paged} actions={create} />
      {created && (
        <Alert
          variant="success"
          isInline
          title={`Virtual cluster ${created.name} is being created on cluster ${created.cluster}`}
          actionClose={
            <Button variant="plain" aria-label="Close" onClick={() => setCreated(undefined)}>
              ✕
            </Button>
          }
        >
          Connect to it once it is online:
          <ClipboardCopy isReadOnly hoverTip="Copy" clickTip="Copied">
            {`virtualcluster connect ${created.name} --project ${created.project}`}
          </ClipboardCopy>
        </Alert>
      )}
      {forbidden ? (
        <Alert variant="info" isInline title="Only cluster administrators see the list of clusters">
          You can still create a virtual cluster on a cluster your project allows and you may use.
        </Alert>
      ) : (
        <>
          <ErrorAlert error={clusters.error} title="Clusters cannot be listed" />
          <ResourceList
            label="Clusters"
            list={clusters}
            rows={paged.visible}
            searching={!!paged.search}
            empty={{
              title: "No clusters connected",
              body: "Connect one with: virtualcluster cluster connect NAME --host-kubeconfig FILE",
            }}
            rowName={(cluster) => cluster.metadata.name ?? ""}
            columns={[
              { title: "Name", cell: (c) => c.metadata.name },
              { title: "Display Name", cell: (c) => c.spec?.displayName },
              {
                title: "Status",
                cell: (c) => (
                  <Label color={c.status?.online ? "green" : c.status?.phase === "Pending" ? "grey" : "red"}>
                    {c.status?.phase ?? "Pending"}
                  </Label>
                ),
              },
              { title: "Kubernetes", cell: (c) => c.status?.kubernetesVersion },
              { title: "Last Heartbeat", cell: (c) => <TimeAgo value={c.status?.lastHeartbeatTime} /> },
              { title: "Spaces", cell: (c) => String(c.status?.spaces?.length ?? 0) },
              { title: "Virtual Clusters", cell: (c) => String(c.status?.virtualClusters?.length ?? 0) },
              {
                title: "kubectl",
                cell: (c) => (
                  <ClipboardCopy isReadOnly variant="inline-compact" hoverTip="Copy" clickTip="Copied">
                    {`virtualcluster connect cluster ${c.metadata.name}`}
                  </ClipboardCopy>
                ),
              },
            ]}
          />
        </>
      )}
      {creating && (
        <CreateVirtualCluster
          clusters={clusters.items.map((c) => c.metadata.name ?? "")}
          onClose={() => setCreating(false)}
          onCreated={setCreated}
        />
      )}
    </PageSection>
  );
}
