// Projects with their members; a project's virtual cluster instances (phase, online, last heartbeat) and, per
// instance: download its kubeconfig (token or client certificate, certificate TTL), copy the `virtualcluster
// connect` command, issue a direct cluster endpoint token (shown once).

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  ClipboardCopy,
  FormGroup,
  FormHelperText,
  FormSelect,
  FormSelectOption,
  HelperText,
  HelperTextItem,
  Label,
  NumberInput,
  PageSection,
  Radio,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged } from "../components/common.tsx";
import { ConfirmDelete, FormModal, ResourceList, ResultModal } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Instance, Project } from "../lib/kube.ts";
import { Link, navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const V1 = "management.platform.sh/v1";
type Member = NonNullable<NonNullable<Project["spec"]>["members"]>[number];

function ProjectForm({ project, onClose }: { project?: Project; onClose: () => void }) {
  const editing = !!project;
  const [name, setName] = useState(project?.metadata.name ?? "");
  const [displayName, setDisplayName] = useState(project?.spec?.displayName ?? "");
  const [members, setMembers] = useState<Member[]>(project?.spec?.members ?? []);
  const update = (index: number, change: Partial<Member>) =>
    setMembers(members.map((member, i) => (i === index ? { ...member, ...change } : member)));
  const submit = async () => {
    const spec = { displayName, members: members.filter((m) => m.name.trim()) };
    if (editing) await api.patch(mgmt("projects", name), { spec });
    else await api.create(mgmt("projects"), { apiVersion: V1, kind: "Project", metadata: { name }, spec });
    return undefined;
  };
  return (
    <FormModal
      title={editing ? `Edit project ${name}` : "Create Project"}
      id="project-form"
      submitLabel={editing ? "Save" : "Create"}
      failure="The project was not saved"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup label="Name" isRequired fieldId="project-name">
        <TextInput id="project-name" isRequired value={name} onChange={(_e, v) => setName(v)} isDisabled={editing} />
      </FormGroup>
      <FormGroup label="Display Name" fieldId="project-display-name">
        <TextInput id="project-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </FormGroup>
      <FormGroup label="Members" role="group" fieldId="project-members">
        {members.map((member, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, by position
          <div key={index} style={{ display: "flex", gap: "0.5rem", marginBottom: "0.5rem" }}>
            <FormSelect
              aria-label={`Kind of member ${index + 1}`}
              value={member.kind ?? "User"}
              onChange={(_e, v) => update(index, { kind: v })}
            >
              <FormSelectOption value="User" label="User" />
              <FormSelectOption value="Team" label="Team" />
            </FormSelect>
            <TextInput
              aria-label={`Name of member ${index + 1}`}
              value={member.name}
              onChange={(_e, v) => update(index, { name: v })}
            />
            <FormSelect
              aria-label={`Role of member ${index + 1}`}
              value={member.clusterRole ?? "view"}
              onChange={(_e, v) => update(index, { clusterRole: v })}
            >
              <FormSelectOption value="view" label="view" />
              <FormSelectOption value="edit" label="edit" />
              <FormSelectOption value="admin" label="admin" />
            </FormSelect>
            <Button
              variant="plain"
              aria-label={`Remove member ${index + 1}`}
              onClick={() => setMembers(members.filter((_, i) => i !== index))}
            >
              ✕
            </Button>
          </div>
        ))}
        <Button
          variant="link"
          onClick={() => setMembers([...members, { kind: "User", name: "", clusterRole: "view" }])}
        >
          Add member
        </Button>
      </FormGroup>
    </FormModal>
  );
}

function ProjectList() {
  const projects = useWatchList<Project>(mgmt("projects"));
  const paged = usePaged(projects.items, (p) => `${p.metadata.name} ${p.spec?.displayName}`);
  const [editing, setEditing] = useState<Project | "new">();
  const [deleting, setDeleting] = useState<Project>();
  const create = (
    <Button variant="primary" onClick={() => setEditing("new")}>
      Create Project
    </Button>
  );
  return (
    <PageSection>
      <Title headingLevel="h1">Projects</Title>
      <ListToolbar label="projects" paged={paged} actions={create} />
      <ErrorAlert error={projects.error} title="Projects cannot be listed" />
      <ResourceList
        label="Projects"
        list={projects}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{ title: "No projects yet", body: "Create a project to hold virtual clusters.", action: create }}
        rowName={(project) => project.metadata.name ?? ""}
        columns={[
          {
            title: "Name",
            cell: (project) => (
              <Link to={`/projects/${encodeURIComponent(project.metadata.name ?? "")}`}>{project.metadata.name}</Link>
            ),
          },
          { title: "Display Name", cell: (project) => project.spec?.displayName },
          {
            title: "Members",
            cell: (project) =>
              (project.spec?.members ?? []).map((m) => `${m.name} (${m.clusterRole ?? "view"})`).join(", ") || "None",
          },
          { title: "Created", cell: (project) => <TimeAgo value={project.metadata.creationTimestamp} /> },
        ]}
        actions={(project) => {
          const name = project.metadata.name ?? "";
          return [
            { title: "Virtual clusters", onClick: () => navigate(`/projects/${encodeURIComponent(name)}`) },
            { title: "Edit members", onClick: () => setEditing(project) },
            { isSeparator: true },
            { title: "Delete", onClick: () => setDeleting(project) },
          ];
        }}
      />
      {editing && (
        <ProjectForm project={editing === "new" ? undefined : editing} onClose={() => setEditing(undefined)} />
      )}
      {deleting && (
        <ConfirmDelete
          what="project"
          name={deleting.metadata.name ?? ""}
          detail="The project and its virtual cluster instances will be deleted. This cannot be undone."
          onConfirm={() => api.remove(mgmt("projects", deleting.metadata.name))}
          onClose={() => setDeleting(undefined)}
        />
      )}
    </PageSection>
  );
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function KubeconfigDialog({
  namespace,
  instance,
  onClose,
}: {
  namespace: string;
  instance: string;
  onClose: () => void;
}) {
  const [form, setForm] = useState<"token" | "cert">("token");
  const [ttlHours, setTtlHours] = useState<number | "">(24);
  const submit = async () => {
    const spec = form === "cert" ? { clientCert: true, certificateTTL: Math.round(Number(ttlHours || 0) * 3600) } : {};
    const result = await api.create<{ status?: { kubeConfig?: string } }>(
      `${mgmt("namespaces", namespace, "virtualclusterinstances", instance)}/kubeconfig`,
      { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec },
    );
    download(`${instance}.kubeconfig`, result.status?.kubeConfig ?? "");
    return undefined;
  };
  return (
    <FormModal
      title={`Kubeconfig of ${instance}`}
      id="kubeconfig-form"
      submitLabel="Download"
      failure="The kubeconfig was not issued"
      variant="small"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup role="radiogroup" fieldId="kubeconfig-form-kind" label="Credential" isStack>
        <Radio
          id="kubeconfig-token"
          name="kubeconfig-kind"
          label="Access token"
          description="A new access key of yours, limited to this virtual cluster"
          isChecked={form === "token"}
          onChange={() => setForm("token")}
        />
        <Radio
          id="kubeconfig-cert"
          name="kubeconfig-kind"
          label="Client certificate"
          isChecked={form === "cert"}
          onChange={() => setForm("cert")}
        />
      </FormGroup>
      {form === "cert" && (
        <FormGroup label="Certificate TTL (hours)" fieldId="kubeconfig-ttl">
          <NumberInput
            id="kubeconfig-ttl"
            inputName="kubeconfig-ttl"
            inputAriaLabel="Certificate TTL (hours)"
            minusBtnAriaLabel="Fewer hours"
            plusBtnAriaLabel="More hours"
            value={ttlHours}
            min={0}
            onMinus={() => setTtlHours(Math.max(0, Number(ttlHours || 0) - 1))}
            onPlus={() => setTtlHours(Number(ttlHours || 0) + 1)}
            onChange={(event) => {
              const value = (event.target as HTMLInputElement).value;
              setTtlHours(value === "" ? "" : Number(value));
            }}
          />
          <FormHelperText>
            <HelperText>
              <HelperTextItem>0: the cluster's signing default (typically one year).</HelperTextItem>
            </HelperText>
          </FormHelperText>
        </FormGroup>
      )}
    </FormModal>
  );
}

function TokenDialog({ project, instance, onClose }: { project: string; instance: string; onClose: () => void }) {
  const [ttl, setTtl] = useState("3600");
  const [token, setToken] = useState<string>();
  const submit = async () => {
    const result = await api.create<{ status?: { token?: string } }>(mgmt("directclusterendpointtokens"), {
      apiVersion: V1,
      kind: "DirectClusterEndpointToken",
      spec: { ttl: Number(ttl), scope: { virtualClusters: [{ project, virtualCluster: instance }] } },
    });
    setToken(result.status?.token ?? "");
    return false;
  };
  if (token !== undefined) {
    return (
      <ResultModal title={`Direct cluster endpoint token for ${instance}`} onClose={onClose}>
        <Alert variant="warning" isInline title="Copy the token now: it is shown only this once." />
        <ClipboardCopy
          isReadOnly
          hoverTip="Copy"
          clickTip="Copied"
          textAriaLabel="Endpoint token"
          toggleAriaLabel="Show the whole token"
        >
          {token}
        </ClipboardCopy>
      </ResultModal>
    );
  }
  return (
    <FormModal
      title={`Direct cluster endpoint token for ${instance}`}
      id="token-form"
      submitLabel="Issue token"
      failure="The token was not issued"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup label="Valid for" fieldId="token-ttl">
        <FormSelect id="token-ttl" value={ttl} onChange={(_e, v) => setTtl(v)}>
          <FormSelectOption value="900" label="15 minutes" />
          <FormSelectOption value="3600" label="1 hour" />
          <FormSelectOption value="28800" label="8 hours" />
          <FormSelectOption value="86400" label="1 day" />
        </FormSelect>
      </FormGroup>
    </FormModal>
  );
}

function ConnectDialog({ project, instance, onClose }: { project: string; instance: string; onClose: () => void }) {
  return (
    <ResultModal title={`Connect to ${instance}`} onClose={onClose}>
      <p>Run this where the virtualcluster command-line client is logged in to the platform:</p>
      <ClipboardCopy
        isReadOnly
        hoverTip="Copy"
        clickTip="Copied"
        textAriaLabel="Connect command"
        toggleAriaLabel="Show the command"
      >
        {`virtualcluster connect ${instance} --project ${project}`}
      </ClipboardCopy>
    </ResultModal>
  );
}

function ProjectInstances({ project }: { project: string }) {
  const session = useSession();
  const namespace = `${session.projectNamespacePrefix}${project}`;
  const instances = useWatchList<Instance>(mgmt("namespaces", namespace, "virtualclusterinstances"));
  const paged = usePaged(instances.items, (i) => `${i.metadata.name} ${i.spec?.displayName} ${i.status?.phase}`);
  const [dialog, setDialog] = useState<{ kind: "kubeconfig" | "connect" | "token"; instance: string }>();
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/projects">Projects</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{project}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Virtual clusters of {project}</Title>
      <ListToolbar label="virtual clusters" paged={paged} />
      <ErrorAlert error={instances.error} title="Virtual clusters cannot be listed" />
      <ResourceList
        label="Virtual clusters"
        list={instances}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{
          title: "No virtual clusters in this project",
          body: `Create one with: virtualcluster create NAME --project ${project} (a virtual cluster that connects registers itself here).`,
        }}
        rowName={(instance) => instance.metadata.name ?? ""}
        columns={[
          { title: "Name", cell: (instance) => instance.spec?.displayName || instance.metadata.name },
          { title: "Phase", cell: (instance) => instance.status?.phase ?? "Pending" },
          {
            title: "Online",
            cell: (instance) =>
              instance.status?.online ? <Label color="green">Online</Label> : <Label color="grey">Offline</Label>,
          },
          { title: "Last heartbeat", cell: (instance) => <TimeAgo value={instance.status?.lastHeartbeatTime} /> },
        ]}
        actions={(instance) => {
          const name = instance.metadata.name ?? "";
          return [
            { title: "Download kubeconfig", onClick: () => setDialog({ kind: "kubeconfig", instance: name }) },
            { title: "Copy connect command", onClick: () => setDialog({ kind: "connect", instance: name }) },
            { title: "Issue endpoint token", onClick: () => setDialog({ kind: "token", instance: name }) },
          ];
        }}
      />
      {dialog?.kind === "kubeconfig" && (
        <KubeconfigDialog namespace={namespace} instance={dialog.instance} onClose={() => setDialog(undefined)} />
      )}
      {dialog?.kind === "connect" && (
        <ConnectDialog project={project} instance={dialog.instance} onClose={() => setDialog(undefined)} />
      )}
      {dialog?.kind === "token" && (
        <TokenDialog project={project} instance={dialog.instance} onClose={() => setDialog(undefined)} />
      )}
    </PageSection>
  );
}

export default function ProjectsPage({ rest }: { rest: string[] }) {
  return rest[0] ? <ProjectInstances project={rest[0]} /> : <ProjectList />;
}
