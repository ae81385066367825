// Users: list with search and paging (live), create and edit (username, display name, email, password, cluster
// roles, teams), Lock / Unlock, Set Password, a user's Access Keys, delete with confirmation.

import {
  Button,
  Checkbox,
  Form,
  FormGroup,
  FormHelperText,
  HelperText,
  HelperTextItem,
  Label,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  PageSection,
  TextInput,
  Title,
} from "@patternfly/react-core";
import { ActionsColumn, Table, Tbody, Td, Th, Thead, Tr } from "@patternfly/react-table";
import { type FormEvent, useState } from "react";
import { ConfirmDelete, Empty, ErrorAlert, ListToolbar, Loading, TimeAgo, usePaged } from "../components/common.tsx";
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
const userText = (user: User) =>
  [user.metadata.name, user.spec?.username, user.spec?.displayName, user.spec?.email].join(" ");

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
  const [email, setEmail] = useState(user?.spec?.email ?? "");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState(new Set((user?.spec?.clusterRoles ?? []).map((r) => r.name)));
  const name = user?.metadata.name ?? "";
  const [memberOf, setMemberOf] = useState(
    new Set(teams.filter((t) => (t.spec?.users ?? []).includes(name)).map((t) => t.metadata.name ?? "")),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const toggle = (set: Set<string>, value: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const spec = {
        username,
        displayName,
        email,
        clusterRoles: [...roles].map((role) => ({ name: role })),
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
      if (password) {
        await api.create(mgmt("users", saved, "password"), {
          apiVersion: V1,
          kind: "UserPassword",
          spec: { password },
        });
      }
      await setTeams(saved, memberOf, teams);
      onClose();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  const title = editing ? `Edit user ${name}` : "Add User";
  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="user-form-title">
      <ModalHeader title={title} labelId="user-form-title" />
      <ModalBody>
        <Form id="user-form" onSubmit={submit}>
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
          <FormGroup label="Email" fieldId="user-email">
            <TextInput id="user-email" type="email" value={email} onChange={(_e, v) => setEmail(v)} />
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
          <ErrorAlert error={error} title={editing ? "The user was not saved" : "The user was not created"} />
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="user-form" variant="primary" isLoading={busy} isDisabled={busy}>
          {editing ? "Save" : "Create"}
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

function PasswordForm({ user, onClose }: { user: User; onClose: () => void }) {
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const name = user.metadata.name ?? "";
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api.create(mgmt("users", name, "password"), { apiVersion: V1, kind: "UserPassword", spec: { password } });
      onClose();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={onClose} variant="small" aria-labelledby="password-title">
      <ModalHeader title={`Set a new password for ${name}`} labelId="password-title" />
      <ModalBody>
        <Form id="password-form" onSubmit={submit}>
          <FormGroup label="New password" isRequired fieldId="new-password">
            <TextInput
              id="new-password"
              type="password"
              autoComplete="new-password"
              isRequired
              value={password}
              onChange={(_e, v) => setPassword(v)}
            />
          </FormGroup>
          <ErrorAlert error={error} title="The password was not set" />
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="password-form" isLoading={busy} isDisabled={busy}>
          Set password
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
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
  const [actionError, setActionError] = useState<unknown>();
  const lock = async (user: User, disabled: boolean) => {
    setActionError(undefined);
    try {
      await api.patch(mgmt("users", user.metadata.name), { spec: { disabled } });
    } catch (failure) {
      setActionError(failure);
    }
  };
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
      <ErrorAlert error={actionError} />
      {users.loading ? (
        <Loading what="users" />
      ) : paged.filtered.length === 0 ? (
        <Empty
          title={paged.search ? "No user matches" : "No users yet"}
          body={paged.search ? "Clear the search to see every user." : "Add a user to let someone log in."}
          action={paged.search ? undefined : add}
        />
      ) : (
        <Table aria-label="Users" variant="compact">
          <Thead>
            <Tr>
              <Th>Username</Th>
              <Th>Display Name</Th>
              <Th>Email</Th>
              <Th>Cluster roles</Th>
              <Th>Status</Th>
              <Th>Created</Th>
              <Th screenReaderText="Actions" />
            </Tr>
          </Thead>
          <Tbody>
            {paged.visible.map((user) => {
              const name = user.metadata.name ?? "";
              return (
                <Tr key={name}>
                  <Td dataLabel="Username">{user.spec?.username || name}</Td>
                  <Td dataLabel="Display Name">{user.spec?.displayName}</Td>
                  <Td dataLabel="Email">{user.spec?.email}</Td>
                  <Td dataLabel="Cluster roles">{(user.spec?.clusterRoles ?? []).map((r) => r.name).join(", ")}</Td>
                  <Td dataLabel="Status">
                    {user.spec?.disabled ? <Label color="orange">Locked</Label> : <Label color="green">Active</Label>}
                  </Td>
                  <Td dataLabel="Created">
                    <TimeAgo value={user.metadata.creationTimestamp} />
                  </Td>
                  <Td isActionCell>
                    <ActionsColumn
                      popperProps={{ position: "right" }}
                      actionsToggle={({ onToggle, isOpen, toggleRef }) => (
                        <Button
                          ref={toggleRef}
                          variant="plain"
                          onClick={onToggle}
                          aria-expanded={isOpen}
                          aria-label={`Actions for ${name}`}
                        >
                          ⋮
                        </Button>
                      )}
                      items={[
                        { title: "Edit", onClick: () => setEditing(user) },
                        user.spec?.disabled
                          ? { title: "Unlock", onClick: () => void lock(user, false) }
                          : { title: "Lock", onClick: () => void lock(user, true) },
                        { title: "Set Password", onClick: () => setPassword(user) },
                        {
                          title: "Access Keys",
                          onClick: () => navigate(`/users/${encodeURIComponent(name)}/access-keys`),
                        },
                        { isSeparator: true },
                        { title: "Delete", onClick: () => setDeleting(user) },
                      ]}
                    />
                  </Td>
                </Tr>
              );
            })}
          </Tbody>
        </Table>
      )}
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
