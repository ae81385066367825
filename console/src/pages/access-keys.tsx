// Access Keys of the caller (Profile -> Access Keys) or, for admins, of any user (Users -> a user -> Access Keys):
// list (display name, type, what the key may reach, when it expires as the server computes it, last activity,
// disabled), Create Access Key (a required Display Name, an optional limited scope, an expiry; checked before it is
// sent), the new key shown once with a copy button, Disable / Enable, delete: each action only where allowed.

import {
  Alert,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Checkbox,
  ClipboardCopy,
  FormGroup,
  FormSelect,
  FormSelectOption,
  Label,
  LabelGroup,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged, useRowAction } from "../components/common.tsx";
import { Field, missing } from "../components/form.tsx";
import { ConfirmDelete, FormModal, ResourceList, ResultModal } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import { scopeLabels } from "../lib/key-scope.ts";
import type { AccessKey, AccessKeyScope } from "../lib/kube.ts";
import { Link } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

const EXPIRY_CHOICES = [
  { label: "1 day", seconds: 86_400 },
  { label: "7 days", seconds: 7 * 86_400 },
  { label: "30 days", seconds: 30 * 86_400 },
  { label: "90 days", seconds: 90 * 86_400 },
  { label: "1 year", seconds: 365 * 86_400 },
  { label: "Never", seconds: 0 },
];
/** A key lasts 90 days unless its maker chooses otherwise: a forgotten key should not work forever. */
const DEFAULT_EXPIRY = String(90 * 86_400);
/** A project name (a DNS label) or "*". */
const PROJECT_NAME = /^(\*|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/;

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);

function ScopeCell({ scope }: { scope: AccessKeyScope | undefined }) {
  const labels = scopeLabels(scope);
  if (labels.length === 0) return <span>{scope ? "Limited (rules)" : "Full access"}</span>;
  return (
    <LabelGroup numLabels={4}>
      {labels.map((label) => (
        <Label key={label} isCompact color="blue">
          {label}
        </Label>
      ))}
    </LabelGroup>
  );
}

const keyLabel = (key: AccessKey) => key.spec?.displayName || (key.metadata.name ?? "");

/** The type as people say it. */
const TYPE_NAMES: Record<string, string> = { Login: "Login", User: "Access key", OIDCRefreshToken: "Refresh token" };

function CreateKey({ user, onClose }: { user: string; onClose: () => void }) {
  const [displayName, setDisplayName] = useState("");
  const [limit, setLimit] = useState(false);
  const [projects, setProjects] = useState("");
  const [virtualClusters, setVirtualClusters] = useState("");
  const [clusters, setClusters] = useState("");
  const [roleVirtualCluster, setRoleVirtualCluster] = useState(false);
  const [rolePlatformCli, setRolePlatformCli] = useState(false);
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [created, setCreated] = useState<string>();

  const validate = () => {
    const errors = missing([["key-display-name", displayName, "Display Name"]]);
    if (!limit) return errors;
    const bad = list(projects).filter((p) => !PROJECT_NAME.test(p));
    if (bad.length) errors["key-projects"] = `Not a project name: ${bad.join(", ")}.`;
    const loose = list(virtualClusters).filter((v) => !/^[^/]+\/[^/]+$/.test(v));
    if (loose.length) errors["key-virtual-clusters"] = `Write project/virtual-cluster: ${loose.join(", ")}.`;
    const nothing =
      ![projects, virtualClusters, clusters].some((v) => list(v).length) && !roleVirtualCluster && !rolePlatformCli;
    if (nothing) errors["key-projects"] = "Choose what the key may reach, or clear Limit Scope.";
    return errors;
  };

  const submit = async () => {
    let scope: AccessKeyScope | undefined;
    if (limit) {
      scope = {};
      const p = list(projects);
      if (p.length) scope.projects = p.map((project) => ({ project }));
      const v = list(virtualClusters);
      if (v.length) {
        scope.virtualClusters = v.map((item) => {
          const [project, virtualCluster] = item.split("/", 2);
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
      spec: { displayName: displayName.trim(), type: "User", user, ttl: Number(expiry), ...(scope ? { scope } : {}) },
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
      validate={validate}
      fieldOf={(field) => (field === "spec.displayName" ? "key-display-name" : undefined)}
      onClose={onClose}
    >
      <Field id="key-display-name" label="Display Name" isRequired helper="Shown in lists and audit events.">
        <TextInput id="key-display-name" isRequired value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </Field>
      <Field id="key-expiry" label="Expiry" helper="The platform's maximum key age may end it sooner.">
        <FormSelect id="key-expiry" value={expiry} onChange={(_e, v) => setExpiry(v)}>
          {EXPIRY_CHOICES.map((choice) => (
            <FormSelectOption key={choice.seconds} value={String(choice.seconds)} label={choice.label} />
          ))}
        </FormSelect>
      </Field>
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
          <Field id="key-projects" label="Projects" helper="Project names separated by commas; * selects all projects.">
            <TextInput id="key-projects" value={projects} onChange={(_e, v) => setProjects(v)} />
          </Field>
          <Field
            id="key-virtual-clusters"
            label="Virtual clusters"
            helper="project/virtual-cluster, separated by commas."
          >
            <TextInput id="key-virtual-clusters" value={virtualClusters} onChange={(_e, v) => setVirtualClusters(v)} />
          </Field>
          <Field id="key-clusters" label="Clusters">
            <TextInput id="key-clusters" value={clusters} onChange={(_e, v) => setClusters(v)} />
          </Field>
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

/** Whether the caller manages `owner`'s keys: its own, or anyone's as an admin (who may create users too). */
function managesKeysOf(session: ReturnType<typeof useSession>, owner: string, verb: string): boolean {
  return session.can(verb, "ownedaccesskeys") && (owner === session.user || session.can("create", "users"));
}

/** The keys of `owner`, live, with the actions the caller may take on them. */
export function AccessKeyList({ owner }: { owner: string }) {
  const session = useSession();
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
  const may = (verb: string) => managesKeysOf(session, owner, verb);
  const create = may("create") ? (
    <Button variant="primary" onClick={() => setCreating(true)}>
      Create Access Key
    </Button>
  ) : undefined;
  return (
    <>
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
          {
            title: "Display Name",
            cell: (key) => (
              <>
                {keyLabel(key)}{" "}
                {key.metadata.name === session.accessKey && (
                  <Label isCompact color="purple">
                    This session
                  </Label>
                )}
              </>
            ),
          },
          { title: "Type", cell: (key) => TYPE_NAMES[key.spec?.type || "User"] ?? key.spec?.type },
          { title: "May reach", cell: (key) => <ScopeCell scope={key.spec?.scope} /> },
          { title: "Expires", cell: (key) => <TimeAgo value={key.status?.expirationTimestamp} empty="Never" /> },
          { title: "Last activity", cell: (key) => <TimeAgo value={key.status?.lastActivity} /> },
          {
            title: "Status",
            cell: (key) =>
              key.spec?.disabled ? <Label color="orange">Disabled</Label> : <Label color="green">Enabled</Label>,
          },
        ]}
        actions={(key) => [
          ...(may("patch")
            ? [
                key.spec?.disabled
                  ? { title: "Enable", onClick: () => void setDisabled(key, false) }
                  : { title: "Disable", onClick: () => void setDisabled(key, true) },
              ]
            : []),
          { isSeparator: true },
          ...(may("delete") ? [{ title: "Delete", onClick: () => setDeleting(key) }] : []),
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
    </>
  );
}

export default function AccessKeysPage({ user }: { user?: string }) {
  const session = useSession();
  return (
    <PageSection>
      {user && (
        <Breadcrumb>
          <BreadcrumbItem>
            <Link to="/users">Users</Link>
          </BreadcrumbItem>
          <BreadcrumbItem>
            <Link to={`/users/${encodeURIComponent(user)}`}>{user}</Link>
          </BreadcrumbItem>
          <BreadcrumbItem isActive>Access Keys</BreadcrumbItem>
        </Breadcrumb>
      )}
      <Title headingLevel="h1">{user ? `Access Keys of ${user}` : "Access Keys"}</Title>
      <AccessKeyList owner={user ?? session.user} />
    </PageSection>
  );
}
