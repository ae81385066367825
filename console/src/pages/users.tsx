// Users: list with search and paging (live; icon and description shown), create and edit (username, display name,
// description, icon, email, password, cluster roles, teams, and the single sign-on link: the subject; checked before
// they are sent, refusals shown at the field), Lock / Unlock, Set Password, a user's page (profile, teams, projects,
// access keys, audit trail), delete with confirmation: each where allowed.

import {
  Avatar,
  Breadcrumb,
  BreadcrumbItem,
  Button,
  Checkbox,
  FormGroup,
  Label,
  PageSection,
  TextArea,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { useState } from "react";
import { AuditTrail } from "../components/audit-trail.tsx";
import { Empty, ErrorAlert, ListToolbar, Loading, TimeAgo, usePaged, useRowAction } from "../components/common.tsx";
import { Details } from "../components/details.tsx";
import { Field, missing } from "../components/form.tsx";
import { projectPath } from "../components/instances.tsx";
import { ConfirmDelete, FormModal, ResourceList } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Project, Team, User } from "../lib/kube.ts";
import { Link, navigate } from "../lib/router.tsx";
import { type Session, useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";
import { checkProfile, MIN_PASSWORD } from "../lib/user-checks.ts";
import AccessKeysPage, { AccessKeyList } from "./access-keys.tsx";

const ROLES = [
  { name: "admin", description: "Manages everything on the platform" },
  { name: "viewer", description: "Reads everything on the platform" },
];
const V1 = "management.platform.sh/v1";
export const userPath = (name: string) => `/users/${encodeURIComponent(name)}`;

/** Where the API's causes about a user show in its form. */
const USER_FIELDS: Record<string, string> = {
  "metadata.name": "user-username",
  "spec.username": "user-username",
  "spec.displayName": "user-display-name",
  "spec.email": "user-email",
  "spec.password": "user-password",
};
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
      validate={() => checkProfile({ username: editing ? undefined : username, email, password })}
      fieldOf={(field) => USER_FIELDS[field]}
      onClose={onClose}
    >
      <Field
        id="user-username"
        label="Username"
        isRequired
        helper='Lower case letters, digits and "-"; the name used to log in.'
      >
        <TextInput
          id="user-username"
          isRequired
          value={username}
          onChange={(_e, v) => setUsername(v)}
          isDisabled={editing}
        />
      </Field>
      <Field id="user-display-name" label="Display Name">
        <TextInput id="user-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </Field>
      <Field id="user-description" label="Description">
        <TextArea id="user-description" value={description} onChange={(_e, v) => setDescription(v)} rows={2} />
      </Field>
      <Field id="user-icon" label="Icon" helper="Address of an image shown beside the user.">
        <TextInput id="user-icon" type="url" value={icon} onChange={(_e, v) => setIcon(v)} />
      </Field>
      <Field id="user-email" label="Email">
        <TextInput id="user-email" type="email" value={email} onChange={(_e, v) => setEmail(v)} />
      </Field>
      <Field
        id="user-subject"
        label="Single sign-on subject"
        helper="sso:<connector>:<the provider's user id> links this user to that identity: a login through the connector reaches this user by it alone."
      >
        <TextInput id="user-subject" value={subject} onChange={(_e, v) => setSubject(v)} />
      </Field>
      {!editing && (
        <Field
          id="user-password"
          label="Password"
          helper={`Optional (at least ${MIN_PASSWORD} characters): without one the user logs in through single sign-on only.`}
        >
          <TextInput
            id="user-password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(_e, v) => setPassword(v)}
          />
        </Field>
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
      validate={() => {
        const errors = missing([["new-password", password, "New password"]]);
        if (!errors["new-password"] && password.length < MIN_PASSWORD) {
          errors["new-password"] = `At least ${MIN_PASSWORD} characters.`;
        }
        return errors;
      }}
      fieldOf={(field) => (field === "spec.password" ? "new-password" : undefined)}
      onClose={onClose}
    >
      <Field id="new-password" label="New password" isRequired>
        <TextInput
          id="new-password"
          type="password"
          autoComplete="new-password"
          isRequired
          value={password}
          onChange={(_e, v) => setNewPassword(v)}
        />
      </Field>
    </FormModal>
  );
}

export default function UsersPage({ rest }: { rest: string[] }) {
  if (rest[0] && rest[1] === "access-keys") return <AccessKeysPage user={rest[0]} />;
  if (rest[0]) return <UserDetail name={rest[0]} />;
  return <UserList />;
}

/** The row actions (and detail page buttons) the caller may take on a user. */
function userActions(
  session: Session,
  user: User,
  open: { edit(): void; password(): void; remove(): void; lock(disabled: boolean): void },
) {
  const name = user.metadata.name ?? "";
  return [
    ...(session.can("update", "users", name) ? [{ title: "Edit", onClick: open.edit }] : []),
    ...(session.can("escalate", "users", name)
      ? [
          user.spec?.disabled
            ? { title: "Unlock", onClick: () => open.lock(false) }
            : { title: "Lock", onClick: () => open.lock(true) },
        ]
      : []),
    ...(session.can("create", "users/password", name) ? [{ title: "Set Password", onClick: open.password }] : []),
    { title: "Access Keys", onClick: () => navigate(`${userPath(name)}/access-keys`) },
    { isSeparator: true },
    ...(session.can("delete", "users", name) ? [{ title: "Delete", onClick: open.remove }] : []),
  ];
}

/** The dialogs a user's actions open, and the actions themselves. */
function useUserDialogs(teams: Team[], onDeleted?: () => void) {
  const [editing, setEditing] = useState<User | "new">();
  const [password, setPassword] = useState<User>();
  const [deleting, setDeleting] = useState<User>();
  const action = useRowAction();
  const lock = (user: User, disabled: boolean) =>
    action.run(() => api.patch(mgmt("users", user.metadata.name), { spec: { disabled } }));
  const open = (user: User) => ({
    edit: () => setEditing(user),
    password: () => setPassword(user),
    remove: () => setDeleting(user),
    lock: (disabled: boolean) => void lock(user, disabled),
  });
  const dialogs = (
    <>
      {editing && (
        <UserForm user={editing === "new" ? undefined : editing} teams={teams} onClose={() => setEditing(undefined)} />
      )}
      {password && <PasswordForm user={password} onClose={() => setPassword(undefined)} />}
      {deleting && (
        <ConfirmDelete
          what="user"
          name={deleting.metadata.name ?? ""}
          onConfirm={() =>
            api.remove(mgmt("users", deleting.metadata.name)).then(() => {
              onDeleted?.();
            })
          }
          onClose={() => setDeleting(undefined)}
        />
      )}
    </>
  );
  return { open, dialogs, error: action.error, add: () => setEditing("new") };
}

function UserDetail({ name }: { name: string }) {
  const session = useSession();
  const watched = useWatchList<User>(mgmt("users"), `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  const teams = useWatchList<Team>(session.can("list", "teams") ? mgmt("teams") : undefined);
  const projects = useWatchList<Project>(mgmt("projects"));
  const user = watched.items[0];
  const { open, dialogs, error } = useUserDialogs(teams.items, () => navigate("/users"));
  const memberOf = teams.items.filter((t) => (t.spec?.users ?? []).includes(name));
  const inProjects = projects.items.filter(
    (p) =>
      p.spec?.owner?.user === name ||
      (p.spec?.members ?? []).some((m) => (m.kind ?? "User") === "User" && m.name === name),
  );
  const username = user?.spec?.username || name;
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/users">Users</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{name}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">User {user?.spec?.displayName || name}</Title>
      <ErrorAlert error={watched.error ?? error} />
      {watched.loading ? (
        <Loading what="the user" />
      ) : !user ? (
        <Empty title="No user here" body={`There is no user ${name}.`} />
      ) : (
        <>
          <div className="vcp-actions">
            {userActions(session, user, open(user))
              .filter((a) => !a.isSeparator && a.title !== "Access Keys")
              .map((a) => (
                <Button key={a.title} variant={a.title === "Delete" ? "danger" : "secondary"} onClick={a.onClick}>
                  {a.title}
                </Button>
              ))}
          </div>
          <Details
            items={[
              ["Username", username],
              ["Display Name", user.spec?.displayName],
              ["Email", user.spec?.email],
              ["Cluster roles", (user.spec?.clusterRoles ?? []).map((r) => r.name).join(", ") || "None"],
              [
                "Status",
                user.spec?.disabled ? (
                  <Label key="status" color="orange">
                    Locked
                  </Label>
                ) : (
                  <Label key="status" color="green">
                    Active
                  </Label>
                ),
              ],
              ["Teams", memberOf.map((t) => t.metadata.name).join(", ") || "None"],
              [
                "Projects",
                inProjects.length
                  ? inProjects.map((p, i) => (
                      <span key={p.metadata.name}>
                        {i > 0 && ", "}
                        <Link to={projectPath(p.metadata.name ?? "")}>{p.metadata.name}</Link>
                      </span>
                    ))
                  : "None",
              ],
              ["Created", <TimeAgo key="created" value={user.metadata.creationTimestamp} />],
            ]}
          />
          <section className="vcp-detail-section">
            <Title headingLevel="h2">Access keys</Title>
            <AccessKeyList owner={name} />
          </section>
        </>
      )}
      <AuditTrail
        title={`Requests by ${username}`}
        label={`Requests by ${username}`}
        selector={`user.username=${username}`}
      />
      <AuditTrail
        title="Changes to this user"
        label="Changes to this user"
        selector={`objectRef.resource=users,objectRef.name=${name}`}
      />
      {dialogs}
    </PageSection>
  );
}

function UserList() {
  const session = useSession();
  const users = useWatchList<User>(mgmt("users"));
  const teams = useWatchList<Team>(session.can("list", "teams") ? mgmt("teams") : undefined);
  const paged = usePaged(users.items, userText);
  const { open, dialogs, error, add } = useUserDialogs(teams.items);
  const addButton = session.can("create", "users") ? (
    <Button variant="primary" onClick={add}>
      Add User
    </Button>
  ) : undefined;
  return (
    <PageSection>
      <Title headingLevel="h1">Users</Title>
      <ListToolbar label="users" paged={paged} actions={addButton} />
      <ErrorAlert error={users.error} title="Users cannot be listed" />
      <ErrorAlert error={error} />
      <ResourceList
        label="Users"
        list={users}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{ title: "No users yet", body: "Add a user to let someone log in.", action: addButton }}
        rowName={(user) => user.metadata.name ?? ""}
        columns={[
          {
            title: "Username",
            cell: (user) => (
              <Link to={userPath(user.metadata.name ?? "")}>
                <UserName user={user} />
              </Link>
            ),
          },
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
        actions={(user) => userActions(session, user, open(user))}
      />
      {dialogs}
    </PageSection>
  );
}
