// Access Keys of the caller (Profile -> Access Keys) or, for admins, of any user (Users -> a user -> Access Keys):
// list (display name, type, scope, expiry, last activity, disabled), Create Access Key (Display Name, an optional
// limited scope, an expiry), the new key shown once with a copy button, Disable / Enable, delete.

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Checkbox,
  ClipboardCopy,
  FormGroup,
  FormHelperText,
  FormSelect,
  FormSelectOption,
  HelperText,
  HelperTextItem,
  Label,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged, useRowAction } from "../components/common.tsx";
import { ConfirmDelete, FormModal, ResourceList, ResultModal } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { AccessKey, AccessKeyScope } from "../lib/kube.ts";
import { Link } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const EXPIRY_CHOICES = [
  { label: "Never", seconds: 0 },
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 7 * 86_400 },
  { label: "30 days", seconds: 30 * 86_400 },
  { label: "90 days", seconds: 90 * 86_400 },
  { label: "1 year", seconds: 365 * 86_400 },
];

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);

/** One line per scope part: "projects: a, b; virtual clusters: p/x". */
export function scopeSummary(scope: AccessKeyScope | undefined): string {
  if (!scope) return "Full access";
  const parts: string[] = [];
  if (scope.projects?.length) parts.push(`projects: ${scope.projects.map((p) => p.project).join(", ")}`);
  if (scope.virtualClusters?.length) {
    parts.push(`virtual clusters: ${scope.virtualClusters.map((v) => `${v.project}/${v.virtualCluster}`).join(", ")}`);
  }
  if (scope.clusters?.length) parts.push(`clusters: ${scope.clusters.map((c) => c.cluster).join(", ")}`);
  if (scope.roles?.length) parts.push(`roles: ${scope.roles.map((r) => r.role).join(", ")}`);
  return parts.length ? parts.join("; ") : "Full access";
}

const keyLabel = (key: AccessKey) => key.spec?.displayName || (key.metadata.name ?? "");

function expiresAt(key: AccessKey): string | undefined {
  const ttl = key.spec?.ttl ?? 0;
  const created = key.metadata.creationTimestamp;
  if (!ttl || !created) return undefined;
  return new Date(Date.parse(created) + ttl * 1000).toISOString();
}

function CreateKey({ user, onClose }: { user: string; onClose: () => void }) {
  const [displayName, setDisplayName] = useState("");
  const [limit, setLimit] = useState(false);
  const [projects, setProjects] = useState("");
  const [virtualClusters, setVirtualClusters] = useState("");
  const [clusters, setClusters] = useState("");
  const [roleVirtualCluster, setRoleVirtualCluster] = useState(false);
  const [rolePlatformCli, setRolePlatformCli] = useState(false);
  const [expiry, setExpiry] = useState("0");
  const [created, setCreated] = useState<string>();

  const submit = async () => {
    let scope: AccessKeyScope | undefined;
    if (limit) {
      scope = {};
      const p = list(projects);
      if (p.length) scope.projects = p.map((project) => ({ project }));
      const v = list(virtualClusters);
      if (v.length) {
        scope.virtualClusters = v.map((item) => {
          const [project, virtualCluster] = item.includes("/") ? item.split("/", 2) : ["*", item];
          return { project, virtualCluster };
        });
      }
      const c = list(clusters);
      if (c.length) scope.clusters = c.map((cluster) => ({ cluster }));
      const roles = [
        ...(roleVirtualCluster ? [{ role: "virtualcluster", projects: p.length ? p : ["*"] }] : []),
        ...(rolePlatformCli ? [{ role: "platformCLI" }] : []),
      ];
      if (roles.length) scope.roles = roles;
    }
    const key = await api.create<AccessKey>(mgmt("ownedaccesskeys"), {
      apiVersion: "management.platform.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { generateName: "key-" },
      spec: { displayName, type: "User", user, ttl: Number(expiry), ...(scope ? { scope } : {}) },
    });
    setCreated(key.spec?.key);
    return false;
  };

  if (created !== undefined) {
    return (
      <ResultModal title="Access key created" onClose={onClose}>
        <Alert variant="warning" isInline title="Copy the key now: it is shown only this once." />
        <ClipboardCopy
          isReadOnly
          hoverTip="Copy"
          clickTip="Copied"
          textAriaLabel="New access key"
          toggleAriaLabel="Show the whole key"
        >
          {created}
        </ClipboardCopy>
      </ResultModal>
    );
  }
  return (
    <FormModal
      title="Create Access Key"
      id="create-key-form"
      submitLabel="Create"
      failure="The access key was not created"
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup label="Display Name" isRequired fieldId="key-display-name">
        <TextInput id="key-display-name" isRequired value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </FormGroup>
      <FormGroup label="Expiry" fieldId="key-expiry">
        <FormSelect id="key-expiry" value={expiry} onChange={(_e, v) => setExpiry(v)}>
          {EXPIRY_CHOICES.map((choice) => (
            <FormSelectOption key={choice.seconds} value={String(choice.seconds)} label={choice.label} />
          ))}
        </FormSelect>
      </FormGroup>
      <FormGroup fieldId="key-limit-scope" role="group" label="Scope">
        <Checkbox
          id="key-limit-scope"
          label="Limit Scope"
          description="Without a scope the key can do everything its owner can."
          isChecked={limit}
          onChange={(_e, on) => setLimit(on)}
        />
      </FormGroup>
      {limit && (
        <>
          <FormGroup label="Projects" fieldId="key-projects">
            <TextInput id="key-projects" value={projects} onChange={(_e, v) => setProjects(v)} />
            <FormHelperText>
              <HelperText>
                <HelperTextItem>Project names separated by commas; * selects all projects.</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <FormGroup label="Virtual clusters" fieldId="key-virtual-clusters">
            <TextInput id="key-virtual-clusters" value={virtualClusters} onChange={(_e, v) => setVirtualClusters(v)} />
            <FormHelperText>
              <HelperText>
                <HelperTextItem>project/virtual-cluster, separated by commas.</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <FormGroup label="Clusters" fieldId="key-clusters">
            <TextInput id="key-clusters" value={clusters} onChange={(_e, v) => setClusters(v)} />
          </FormGroup>
          <FormGroup label="Roles" role="group" fieldId="key-roles" isStack>
            <Checkbox
              id="key-role-virtualcluster"
              label="virtualcluster"
              description="Connect virtual clusters to the platform"
              isChecked={roleVirtualCluster}
              onChange={(_e, on) => setRoleVirtualCluster(on)}
            />
            <Checkbox
              id="key-role-platformcli"
              label="platformCLI"
              description="The command-line client's reads"
              isChecked={rolePlatformCli}
              onChange={(_e, on) => setRolePlatformCli(on)}
            />
          </FormGroup>
        </>
      )}
    </FormModal>
  );
}

export default function AccessKeysPage({ user }: { user?: string }) {
  const session = useSession();
  const owner = user ?? session.user;
  const keys = useWatchList<AccessKey>(
    mgmt("ownedaccesskeys"),
    `fieldSelector=${encodeURIComponent(`spec.user=${owner}`)}`,
  );
  const paged = usePaged(keys.items, (k) => `${k.metadata.name} ${k.spec?.displayName} ${k.spec?.type}`);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<AccessKey>();
  const action = useRowAction();
  const setDisabled = (key: AccessKey, disabled: boolean) =>
    action.run(() => api.patch(mgmt("ownedaccesskeys", key.metadata.name), { spec: { disabled } }));
  const create = (
    <Button variant="primary" onClick={() => setCreating(true)}>
      Create Access Key
    </Button>
  );
  return (
    <PageSection>
      {user && (
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/users">Users</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>{user}</BreadcrumbItem>
        </Breadcrumb>
      )}
      <Title headingLevel="h1">{user ? `Access Keys of ${user}` : "Access Keys"}</Title>
      <ListToolbar label="access keys" paged={paged} actions={create} />
      <ErrorAlert error={keys.error} title="Access keys cannot be listed" />
      <ErrorAlert error={action.error} />
      <ResourceList
        label="Access Keys"
        list={keys}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{
          title: "No access keys",
          body: "Create an access key for the command-line client, a script or a virtual cluster.",
          action: create,
        }}
        rowName={keyLabel}
        columns={[
          { title: "Display Name", cell: keyLabel },
          { title: "Type", cell: (key) => key.spec?.type || "User" },
          { title: "Scope", cell: (key) => scopeSummary(key.spec?.scope) },
          { title: "Expires", cell: (key) => <TimeAgo value={expiresAt(key)} /> },
          { title: "Last activity", cell: (key) => <TimeAgo value={key.status?.lastActivity} /> },
          {
            title: "Status",
            cell: (key) =>
              key.spec?.disabled ? <Label color="orange">Disabled</Label> : <Label color="green">Enabled</Label>,
          },
        ]}
        actions={(key) => [
          key.spec?.disabled
            ? { title: "Enable", onClick: () => void setDisabled(key, false) }
            : { title: "Disable", onClick: () => void setDisabled(key, true) },
          { isSeparator: true },
          { title: "Delete", onClick: () => setDeleting(key) },
        ]}
      />
      {creating && <CreateKey user={owner} onClose={() => setCreating(false)} />}
      {deleting && (
        <ConfirmDelete
          what="access key"
          name={deleting.spec?.displayName || (deleting.metadata.name ?? "")}
          detail="Anything that uses this key loses access at once. This cannot be undone."
          onConfirm={() => api.remove(mgmt("ownedaccesskeys", deleting.metadata.name))}
          onClose={() => setDeleting(undefined)}
        />
      )}
    </PageSection>
  );
}
