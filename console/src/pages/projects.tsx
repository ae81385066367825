// Projects the caller may see (the server lists only those) with their members; a project's page (owner, members,
// its virtual clusters live, its audit trail) and a virtual cluster's page (state, conditions, the requests made in
// it and the changes made to it); per virtual cluster: download its kubeconfig (token or client certificate,
// certificate TTL), copy the `virtualcluster connect` command, issue a direct cluster endpoint token (shown once).
// Every action is offered only where the server's rules allow it.

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  ClipboardCopy,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
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
import { Table, Tbody, Td, Th, Thead, Tr } from "@patternfly/react-table";
import { type ReactNode, useEffect, useState } from "react";
import { AuditTrail } from "../components/audit-trail.tsx";
import { Empty, ErrorAlert, ListToolbar, Loading, TimeAgo, usePaged } from "../components/common.tsx";
import { Field, type FieldErrors, missing } from "../components/form.tsx";
import { InstanceOnline, instancePath, projectPath } from "../components/instances.tsx";
import { ConfirmDelete, FormModal, ResourceList, ResultModal } from "../components/resource-list.tsx";
import { ApiError, api, mgmt } from "../lib/api.ts";
import type { Instance, Project } from "../lib/kube.ts";
import type { Permissions } from "../lib/permissions.ts";
import { Link, navigate } from "../lib/router.tsx";
import { type Session, useRulesIn, useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const V1 = "management.platform.sh/v1";
type Member = NonNullable<NonNullable<Project["spec"]>["members"]>[number];
/** A DNS label: a project name, and its namespace's suffix. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function ProjectForm({ project, onClose }: { project?: Project; onClose: () => void }) {
  const editing = !!project;
  const [name, setName] = useState(project?.metadata.name ?? "");
  const [displayName, setDisplayName] = useState(project?.spec?.displayName ?? "");
  const [members, setMembers] = useState<Member[]>(project?.spec?.members ?? []);
  const update = (index: number, change: Partial<Member>) =>
    setMembers(members.map((member, i) => (i === index ? { ...member, ...change } : member)));
  const validate = (): FieldErrors => {
    const errors = missing([["project-name", name, "Name"]]);
    if (!errors["project-name"] && !DNS_LABEL.test(name)) {
      errors["project-name"] = 'Lower case letters, digits and "-", starting and ending with a letter or digit.';
    }
    return errors;
  };
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
      validate={validate}
      fieldOf={(field) => ({ "metadata.name": "project-name", "spec.displayName": "project-display-name" })[field]}
      onClose={onClose}
    >
      <Field id="project-name" label="Name" isRequired>
        <TextInput id="project-name" isRequired value={name} onChange={(_e, v) => setName(v)} isDisabled={editing} />
      </Field>
      <Field id="project-display-name" label="Display Name">
        <TextInput id="project-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </Field>
      <FormGroup label="Members" role="group" fieldId="project-members">
        {members.map((member, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, by position
          <div key={index} className="vcp-member-row">
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

const memberText = (project: Project) =>
  (project.spec?.members ?? []).map((m) => `${m.name} (${m.clusterRole ?? "view"})`).join(", ") || "None";

/** The role the session's user holds in the project, as the project says it. */
function roleIn(session: Session, project: Project): string | undefined {
  const owner = project.spec?.owner;
  if (owner?.user === session.user || (owner?.team && session.teams.includes(owner.team))) return "owner";
  const roles = (project.spec?.members ?? [])
    .filter((m) => ((m.kind ?? "User") === "User" ? m.name === session.user : session.teams.includes(m.name)))
    .map((m) => m.clusterRole ?? "view");
  return ["admin", "edit", "view"].find((role) => roles.includes(role));
}

function ProjectList() {
  const session = useSession();
  const projects = useWatchList<Project>(mgmt("projects"));
  const paged = usePaged(projects.items, (p) => `${p.metadata.name} ${p.spec?.displayName}`);
  const [editing, setEditing] = useState<Project | "new">();
  const [deleting, setDeleting] = useState<Project>();
  const canCreate = session.can("create", "projects");
  const create = canCreate ? (
    <Button variant="primary" onClick={() => setEditing("new")}>
      Create Project
    </Button>
  ) : undefined;
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
        empty={{
          title: "No projects yet",
          body: canCreate
            ? "Create a project to hold virtual clusters."
            : "You are not a member of any project. A project's owner or an admin can add you.",
          action: create,
        }}
        rowName={(project) => project.metadata.name ?? ""}
        columns={[
          {
            title: "Name",
            cell: (project) => <Link to={projectPath(project.metadata.name ?? "")}>{project.metadata.name}</Link>,
          },
          { title: "Display Name", cell: (project) => project.spec?.displayName },
          { title: "Your role", cell: (project) => roleIn(session, project) ?? "—" },
          { title: "Members", cell: memberText },
          { title: "Created", cell: (project) => <TimeAgo value={project.metadata.creationTimestamp} /> },
        ]}
        actions={(project) => {
          const name = project.metadata.name ?? "";
          return [
            { title: "Open", onClick: () => navigate(projectPath(name)) },
            ...(session.can("update", "projects", name)
              ? [{ title: "Edit members", onClick: () => setEditing(project) }]
              : []),
            { isSeparator: true },
            ...(session.can("delete", "projects", name)
              ? [{ title: "Delete", onClick: () => setDeleting(project) }]
              : []),
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

type Dialog = { kind: "kubeconfig" | "connect" | "token"; instance: string };

/** The actions on one instance the caller may take (the namespace's rules and the cluster-wide ones). */
function instanceActions(session: Session, rules: Permissions | undefined, name: string, open: (d: Dialog) => void) {
  return [
    ...(rules?.can("create", "virtualclusterinstances/kubeconfig", name)
      ? [{ title: "Download kubeconfig", onClick: () => open({ kind: "kubeconfig", instance: name }) }]
      : []),
    { title: "Copy connect command", onClick: () => open({ kind: "connect", instance: name }) },
    ...(session.can("create", "directclusterendpointtokens")
      ? [{ title: "Issue endpoint token", onClick: () => open({ kind: "token", instance: name }) }]
      : []),
  ];
}

function InstanceDialogs({
  project,
  namespace,
  dialog,
  close,
}: {
  project: string;
  namespace: string;
  dialog?: Dialog;
  close: () => void;
}) {
  if (dialog?.kind === "kubeconfig")
    return <KubeconfigDialog namespace={namespace} instance={dialog.instance} onClose={close} />;
  if (dialog?.kind === "connect") return <ConnectDialog project={project} instance={dialog.instance} onClose={close} />;
  if (dialog?.kind === "token") return <TokenDialog project={project} instance={dialog.instance} onClose={close} />;
  return null;
}

function Details({ items }: { items: [string, ReactNode][] }) {
  return (
    <DescriptionList isHorizontal isCompact className="vcp-detail-section">
      {items.map(([term, value]) => (
        <DescriptionListGroup key={term}>
          <DescriptionListTerm>{term}</DescriptionListTerm>
          <DescriptionListDescription>{value ?? "—"}</DescriptionListDescription>
        </DescriptionListGroup>
      ))}
    </DescriptionList>
  );
}

/** GET of one object, with its failure; `path` undefined: nothing. */
function useObject<T>(path: string | undefined): { object?: T; error?: unknown } {
  const [state, setState] = useState<{ object?: T; error?: unknown }>({});
  useEffect(() => {
    if (!path) return;
    setState({});
    api.get<T>(path).then(
      (object) => setState({ object }),
      (error) => setState({ error }),
    );
  }, [path]);
  return state;
}

function NotReadable({ what, error }: { what: string; error: unknown }) {
  const missingOrHidden = error instanceof ApiError && (error.code === 404 || error.code === 403);
  return missingOrHidden ? (
    <Empty title={`No ${what} here`} body={`It does not exist, or you may not see it.`} />
  ) : (
    <ErrorAlert error={error} title={`The ${what} cannot be read`} />
  );
}

function ProjectDetail({ project }: { project: string }) {
  const { object, error } = useObject<Project>(mgmt("projects", project));
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/projects">Projects</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{project}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Project {object?.spec?.displayName || project}</Title>
      {error ? (
        <NotReadable what="project" error={error} />
      ) : !object ? (
        <Loading what="the project" />
      ) : (
        <ProjectBody project={project} object={object} />
      )}
    </PageSection>
  );
}

/** A readable project: its facts, members, virtual clusters and audit trail. */
function ProjectBody({ project, object }: { project: string; object: Project }) {
  const session = useSession();
  const namespace = `${session.projectNamespacePrefix}${project}`;
  const rules = useRulesIn(namespace);
  const instances = useWatchList<Instance>(mgmt("namespaces", namespace, "virtualclusterinstances"));
  const paged = usePaged(instances.items, (i) => `${i.metadata.name} ${i.spec?.displayName} ${i.status?.phase}`);
  const [dialog, setDialog] = useState<Dialog>();
  const [editing, setEditing] = useState(false);
  const owner = object.spec?.owner;
  return (
    <>
      <Details
        items={[
          ["Name", project],
          ["Display Name", object.spec?.displayName],
          ["Owner", owner?.user ?? (owner?.team ? `team ${owner.team}` : undefined)],
          [
            "Your role",
            roleIn(session, object) ?? (session.can("get", "projects") ? "platform-wide access" : undefined),
          ],
          ["Namespace", namespace],
          ["Created", <TimeAgo key="created" value={object.metadata.creationTimestamp} />],
        ]}
      />
      <section className="vcp-detail-section">
        <Title headingLevel="h2">Members</Title>
        {session.can("update", "projects", project) && (
          <Button variant="secondary" onClick={() => setEditing(true)}>
            Edit members
          </Button>
        )}
        {(object.spec?.members ?? []).length === 0 ? (
          <p>No members.</p>
        ) : (
          <Table aria-label="Members" variant="compact">
            <Thead>
              <Tr>
                <Th>Kind</Th>
                <Th>Name</Th>
                <Th>Role</Th>
              </Tr>
            </Thead>
            <Tbody>
              {(object.spec?.members ?? []).map((m) => (
                <Tr key={`${m.kind}/${m.name}`}>
                  <Td dataLabel="Kind">{m.kind ?? "User"}</Td>
                  <Td dataLabel="Name">{m.name}</Td>
                  <Td dataLabel="Role">{m.clusterRole ?? "view"}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
      </section>
      <section className="vcp-detail-section">
        <Title headingLevel="h2">Virtual clusters</Title>
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
            {
              title: "Name",
              cell: (instance) => (
                <Link to={instancePath(project, instance.metadata.name ?? "")}>
                  {instance.spec?.displayName || instance.metadata.name}
                </Link>
              ),
            },
            { title: "Phase", cell: (instance) => instance.status?.phase ?? "Pending" },
            { title: "Online", cell: (instance) => <InstanceOnline instance={instance} /> },
            { title: "Last heartbeat", cell: (instance) => <TimeAgo value={instance.status?.lastHeartbeatTime} /> },
          ]}
          actions={(instance) => instanceActions(session, rules, instance.metadata.name ?? "", setDialog)}
        />
      </section>
      <AuditTrail
        title="Changes to this project"
        label="Changes to this project"
        selector={`objectRef.resource=projects,objectRef.name=${project}`}
      />
      <InstanceDialogs project={project} namespace={namespace} dialog={dialog} close={() => setDialog(undefined)} />
      {editing && <ProjectForm project={object} onClose={() => setEditing(false)} />}
    </>
  );
}

function Conditions({ instance }: { instance: Instance }) {
  const conditions = instance.status?.conditions ?? [];
  if (conditions.length === 0) return <p>The virtual cluster has reported no conditions.</p>;
  return (
    <Table aria-label="Conditions" variant="compact">
      <Thead>
        <Tr>
          <Th>Type</Th>
          <Th>Status</Th>
          <Th>Reason</Th>
          <Th>Message</Th>
          <Th>Since</Th>
        </Tr>
      </Thead>
      <Tbody>
        {conditions.map((c) => (
          <Tr key={c.type}>
            <Td dataLabel="Type">{c.type}</Td>
            <Td dataLabel="Status">
              <Label isCompact color={c.status === "True" ? "green" : c.status === "False" ? "red" : "grey"}>
                {c.status}
              </Label>
            </Td>
            <Td dataLabel="Reason">{c.reason}</Td>
            <Td dataLabel="Message">{c.message}</Td>
            <Td dataLabel="Since">
              <TimeAgo value={c.lastTransitionTime} />
            </Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

function InstanceDetail({ project, name }: { project: string; name: string }) {
  const session = useSession();
  const namespace = `${session.projectNamespacePrefix}${project}`;
  const rules = useRulesIn(namespace);
  const watched = useWatchList<Instance>(
    mgmt("namespaces", namespace, "virtualclusterinstances"),
    `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
  );
  const instance = watched.items[0];
  const [dialog, setDialog] = useState<Dialog>();
  const actions = instanceActions(session, rules, name, setDialog);
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/projects">Projects</Link>
        </BreadcrumbItem>
        <BreadcrumbItem>
          <Link to={projectPath(project)}>{project}</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{name}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Virtual cluster {instance?.spec?.displayName || name}</Title>
      {watched.error ? (
        <NotReadable what="virtual cluster" error={watched.error} />
      ) : watched.loading ? (
        <Loading what="the virtual cluster" />
      ) : !instance ? (
        <Empty title="No virtual cluster here" body={`Project ${project} has no virtual cluster ${name}.`} />
      ) : (
        <>
          <div className="vcp-actions">
            {actions.map((action) => (
              <Button key={action.title} variant="secondary" onClick={action.onClick}>
                {action.title}
              </Button>
            ))}
          </div>
          <Details
            items={[
              ["Name", name],
              [
                "Project",
                <Link key="project" to={projectPath(project)}>
                  {project}
                </Link>,
              ],
              ["Online", <InstanceOnline key="online" instance={instance} />],
              ["Phase", instance.status?.phase ?? "Pending"],
              ["Message", instance.status?.message],
              ["Last heartbeat", <TimeAgo key="heartbeat" value={instance.status?.lastHeartbeatTime} />],
              ["Kubernetes version", instance.status?.kubernetesVersion],
              ["Host cluster", instance.spec?.clusterRef?.cluster],
              ["Host namespace", instance.spec?.clusterRef?.namespace],
              ["Created", <TimeAgo key="created" value={instance.metadata.creationTimestamp} />],
            ]}
          />
          <section className="vcp-detail-section">
            <Title headingLevel="h2">Conditions</Title>
            <Conditions instance={instance} />
          </section>
        </>
      )}
      <AuditTrail
        title="Requests in this virtual cluster"
        label="Requests in this virtual cluster"
        selector={`instance=${namespace}/${name}`}
      />
      <AuditTrail
        title="Changes to this virtual cluster"
        label="Changes to this virtual cluster"
        selector={`objectRef.resource=virtualclusterinstances,objectRef.namespace=${namespace},objectRef.name=${name}`}
      />
      <InstanceDialogs project={project} namespace={namespace} dialog={dialog} close={() => setDialog(undefined)} />
    </PageSection>
  );
}

export default function ProjectsPage({ rest }: { rest: string[] }) {
  if (rest[0] && rest[1] === "virtualclusters" && rest[2]) return <InstanceDetail project={rest[0]} name={rest[2]} />;
  return rest[0] ? <ProjectDetail project={rest[0]} /> : <ProjectList />;
}
