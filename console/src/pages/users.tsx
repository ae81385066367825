// Users: list with search and paging (live; icon and description shown), create and edit (username, display name,
// description, icon, email, password, cluster roles, teams, and the single sign-on link: the subject), Lock / Unlock,
// Set Password, a user's Access Keys, delete with confirmation.

import {
  Avatar,
  Button,
  Checkbox,
  FormGroup,
  FormHelperText,
  HelperText,
  HelperTextItem,
  Label,
  PageSection,
  TextArea,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged, useRowAction } from "../components/common.tsx";
import { ConfirmDelete, FormModal, ResourceList } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Team, User } from "../lib/kube.ts";
import { navigate } from "../lib/router.tsx";
import { useWatchList } from "../lib/use-watch-list.ts";
import AccessKeysPage from "./access-keys.tsx";

const ROLES = [
  { name: "admin", description: "Manages everything on the platform" },
  { name: "viewer", description: "Reads everything on the platform" },
];
const V1 = "management.platform.sh/v1";
const savePassword = (user: string, password: string) =>
  api.create(mgmt("users", user, "password"), { apiVersion: V1, kind: "UserPassword", spec: { password } });
const userText = (user: User) =>
  [user.metadata.name, user.spec?.username, user.spec?.displayName, user.spec?.description, user.spec?.email].join(" ");
/** Only a web address is shown as an icon (the console's CSP decides which hosts load). */
const iconOf = (user: User) => (/^https?:\/\//i.test(user.spec?.icon ?? "") ? user.spec?.icon : undefined);

function UserName({ user }: { user: User }) {
  const icon = iconOf(user);
  const name = user.spec?.username || user.metadata.name;
  return (
    <span className="vcp-user-name">
      {icon && <Avatar src={icon} alt={`Icon of ${name}`} size="sm" style={{ marginRight: "0.5rem" }} />}
      {name}
    </span>
  );
}

function DisplayName({ user }: { user: User }) {
  return (
    <>
      <div>{user.spec?.displayName}</div>
      {user.spec?.description && <small className="vcp-user-description">{user.spec.description}</small>}
    </>
  );
}

async function setTeams(user: string, wanted: Set<string>, teams: Team[]): Promise<void> {
  for (const team of teams) {
    const members = team.spec?.users ?? [];
    const has = members.includes(user);
    if (has === wanted.has(team.metadata.name ?? "")) continue;
    const users = has ? members.filter((m) => m !== user) : [...members, user];
    await api.patch(mgmt("teams", team.metadata.name), { spec: { users } });
  }
}

function UserForm({ user, teams, onClose }: { user?: User; teams: Team[]; onClose: () => void }) {
  const editing = !!user;
  const [username, setUsername] = useState(user?.spec?.username ?? user?.metadata.name ?? "");
  const [displayName, setDisplayName] = useState(user?.spec?.displayName ?? "");
  const [description, setDescription] = useState(user?.spec?.description ?? "");
  const [icon, setIcon] = useState(user?.spec?.icon ?? "");
  const [email, setEmail] = useState(user?.spec?.email ?? "");
  const [subject, setSubject] = useState(user?.spec?.subject ?? "");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState(new Set((user?.spec?.clusterRoles ?? []).map((r) => r.name)));
  const name = user?.metadata.name ?? "";
  const [memberOf, setMemberOf] = useState(
    new Set(teams.filter((t) => (t.spec?.users ?? []).includes(name)).map((t) => t.metadata.name ?? "")),
  );
  const toggle = (set: Set<string>, value: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

  const submit = async () => {
    // Optional fields are sent when they hold something or had something (no empty strings on untouched users).
    const optional = (field: "description" | "icon", value: string) =>
      value || user?.spec?.[field] ? { [field]: value } : {};
    const spec = {
      username,
      displayName,
      ...optional("description", description),
      ...optional("icon", icon),
      email,
      clusterRoles: [...roles].map((role) => ({ name: role })),
      // Empty: the default (the username) on create, unchanged on edit.
      ...(subject && subject !== user?.spec?.subject ? { subject } : {}),
    };
    let saved = name;
    if (editing) {
      await api.patch(mgmt("users", name), { spec });
    } else {
      const created = await api.create<User>(mgmt("users"), {
        apiVersion: V1,
        kind: "User",
        metadata: { name: username },
        spec,
      });
      saved = created.metadata.name ?? username;
    }
    if (password) await savePassword(saved, password);
    await setTeams(saved, memberOf, teams);
    return undefined;
  };

  return (
    <FormModal
      title={editing ? `Edit user ${name}` : "Add User"}
      id="user-form"
      submitLabel={editing ? "Save" : "Create"}
      failure={editing ? "The user was not saved" : "The user was not created"}
      onSubmit={submit}
      onClose={onClose}
    >
      <FormGroup label="Username" isRequired fieldId="user-username">
        <TextInput
          id="user-username"
          isRequired
          value={username}
          onChange={(_e, v) => setUsername(v)}
          isDisabled={editing}
        />
        <FormHelperText>
          <HelperText>
            <HelperTextItem>Lower case letters, digits and "-"; the name used to log in.</HelperTextItem>
          </HelperText>
        </FormHelperText>
      </FormGroup>
      <FormGroup label="Display Name" fieldId="user-display-name">
        <TextInput id="user-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </FormGroup>
      <FormGroup label="Description" fieldId="user-description">
        <TextArea id="user-description" value={description} onChange={(_e, v) => setDescription(v)} rows={2} />
      </FormGroup>
      <FormGroup label="Icon" fieldId="user-icon">
        <TextInput id="user-icon" type="url" value={icon} onChange={(_e, v) => setIcon(v)} />
        <FormHelperText>
          <HelperText>
            <HelperTextItem>Address of an image shown beside the user.</HelperTextItem>
          </HelperText>
        </FormHelperText>
      </FormGroup>
      <FormGroup label="Email" fieldId="user-email">
        <TextInput id="user-email" type="email" value={email} onChange={(_e, v) => setEmail(v)} />
      </FormGroup>
      <FormGroup label="Single sign-on subject" fieldId="user-subject">
        <TextInput id="user-subject" value={subject} onChange={(_e, v) => setSubject(v)} />
        <FormHelperText>
          <HelperText>
            <HelperTextItem>
              sso:&lt;connector&gt;:&lt;the provider's user id&gt; links this user to that identity: a login through the
              connector reaches this user by it alone.
            </HelperTextItem>
          </HelperText>
        </FormHelperText>
      </FormGroup>
      {!editing && (
        <FormGroup label="Password" fieldId="user-password">
          <TextInput
            id="user-password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(_e, v) => setPassword(v)}
          />
          <FormHelperText>
            <HelperText>
              <HelperTextItem>Optional: without one the user logs in through single sign-on only.</HelperTextItem>
            </HelperText>
          </FormHelperText>
        </FormGroup>
      )}
      <FormGroup label="Cluster roles" role="group" fieldId="user-roles" isStack>
        {ROLES.map((role) => (
          <Checkbox
            key={role.name}
            id={`user-role-${role.name}`}
            label={role.name}
            description={role.description}
            isChecked={roles.has(role.name)}
            onChange={(_e, on) => setRoles(toggle(roles, role.name, on))}
          />
        ))}
      </FormGroup>
      <FormGroup label="Teams" role="group" fieldId="user-teams" isStack>
        {teams.length === 0 && <span>No teams yet: create them under Teams.</span>}
        {teams.map((team) => (
          <Checkbox
            key={team.metadata.name}
            id={`user-team-${team.metadata.name}`}
            label={team.spec?.displayName || team.metadata.name}
            isChecked={memberOf.has(team.metadata.name ?? "")}
            onChange={(_e, on) => setMemberOf(toggle(memberOf, team.metadata.name ?? "", on))}
          />
        ))}
      </FormGroup>
    </FormModal>
  );
}

function PasswordForm({ user, onClose }: { user: User; onClose: () => void }) {
  const [password, setNewPassword] = useState("");
  const name = user.metadata.name ?? "";
  return (
    <FormModal
      title={`Set a new password for ${name}`}
      id="password-form"
      submitLabel="Set password"
      failure="The password was not set"
      variant="small"
      onSubmit={async () => {
        await savePassword(name, password);
        return undefined;
      }}
      onClose={onClose}
    >
      <FormGroup label="New password" isRequired fieldId="new-password">
        <TextInput
          id="new-password"
          type="password"
          autoComplete="new-password"
          isRequired
          value={password}
          onChange={(_e, v) => setNewPassword(v)}
        />
      </FormGroup>
    </FormModal>
  );
}

export default function UsersPage({ rest }: { rest: string[] }) {
  if (rest[0] && rest[1] === "access-keys") return <AccessKeysPage user={rest[0]} />;
  return <UserList />;
}

function UserList() {
  const users = useWatchList<User>(mgmt("users"));
  const teams = useWatchList<Team>(mgmt("teams"));
  const paged = usePaged(users.items, userText);
  const [editing, setEditing] = useState<User | "new">();
  const [password, setPassword] = useState<User>();
  const [deleting, setDeleting] = useState<User>();
  const action = useRowAction();
  const lock = (user: User, disabled: boolean) =>
    action.run(() => api.patch(mgmt("users", user.metadata.name), { spec: { disabled } }));
  const add = (
    <Button variant="primary" onClick={() => setEditing("new")}>
      Add User
    </Button>
  );
  return (
    <PageSection>
      <Title headingLevel="h1">Users</Title>
      <ListToolbar label="users" paged={paged} actions={add} />
      <ErrorAlert error={users.error} title="Users cannot be listed" />
      <ErrorAlert error={action.error} />
      <ResourceList
        label="Users"
        list={users}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{ title: "No users yet", body: "Add a user to let someone log in.", action: add }}
        rowName={(user) => user.metadata.name ?? ""}
        columns={[
          { title: "Username", cell: (user) => <UserName user={user} /> },
          { title: "Display Name", cell: (user) => <DisplayName user={user} /> },
          { title: "Email", cell: (user) => user.spec?.email },
          { title: "Cluster roles", cell: (user) => (user.spec?.clusterRoles ?? []).map((r) => r.name).join(", ") },
          {
            title: "Status",
            cell: (user) =>
              user.spec?.disabled ? <Label color="orange">Locked</Label> : <Label color="green">Active</Label>,
          },
          { title: "Created", cell: (user) => <TimeAgo value={user.metadata.creationTimestamp} /> },
        ]}
        actions={(user) => {
          const name = user.metadata.name ?? "";
          return [
            { title: "Edit", onClick: () => setEditing(user) },
            user.spec?.disabled
              ? { title: "Unlock", onClick: () => void lock(user, false) }
              : { title: "Lock", onClick: () => void lock(user, true) },
            { title: "Set Password", onClick: () => setPassword(user) },
            { title: "Access Keys", onClick: () => navigate(`/users/${encodeURIComponent(name)}/access-keys`) },
            { isSeparator: true },
            { title: "Delete", onClick: () => setDeleting(user) },
          ];
        }}
      />
      {editing && (
        <UserForm
          user={editing === "new" ? undefined : editing}
          teams={teams.items}
          onClose={() => setEditing(undefined)}
        />
      )}
      {password && <PasswordForm user={password} onClose={() => setPassword(undefined)} />}
      {deleting && (
        <ConfirmDelete
          what="user"
          name={deleting.metadata.name ?? ""}
          onConfirm={() => api.remove(mgmt("users", deleting.metadata.name)).then(() => undefined)}
          onClose={() => setDeleting(undefined)}
        />
      )}
    </PageSection>
  );
}
