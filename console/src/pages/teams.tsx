// Teams: for those who may list them, every team with search and paging (live), create, edit members, delete with
// confirmation, each where allowed; for everyone else, the teams they belong to.

import { Button, Checkbox, FormGroup, PageSection, TextInput, Title } from "@patternfly/react-core";
import { useEffect, useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged } from "../components/common.tsx";
import { Field, missing } from "../components/form.tsx";
import { ConfirmDelete, FormModal, ResourceList } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Team, User } from "../lib/kube.ts";
import { type Session, useSession } from "../lib/session.ts";
import type { WatchedList } from "../lib/use-watch-list.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

function TeamForm({ team, users, onClose }: { team?: Team; users: User[]; onClose: () => void }) {
  const editing = !!team;
  const [name, setName] = useState(team?.metadata.name ?? "");
  const [displayName, setDisplayName] = useState(team?.spec?.displayName ?? "");
  const [members, setMembers] = useState(new Set(team?.spec?.users ?? []));
  const submit = async () => {
    const spec = { displayName, users: [...members] };
    if (editing) await api.patch(mgmt("teams", name), { spec });
    else
      await api.create(mgmt("teams"), {
        apiVersion: "management.platform.sh/v1",
        kind: "Team",
        metadata: { name },
        spec,
      });
    return undefined;
  };
  return (
    <FormModal
      title={editing ? `Edit team ${name}` : "Create Team"}
      id="team-form"
      submitLabel={editing ? "Save" : "Create"}
      failure="The team was not saved"
      onSubmit={submit}
      validate={() => missing([["team-name", name, "Name"]])}
      fieldOf={(field) => ({ "metadata.name": "team-name", "spec.displayName": "team-display-name" })[field]}
      onClose={onClose}
    >
      <Field id="team-name" label="Name" isRequired>
        <TextInput id="team-name" isRequired value={name} onChange={(_e, v) => setName(v)} isDisabled={editing} />
      </Field>
      <Field id="team-display-name" label="Display Name">
        <TextInput id="team-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </Field>
      <FormGroup label="Members" role="group" fieldId="team-members" isStack>
        {users.length === 0 && <span>No users yet.</span>}
        {users.map((user) => {
          const id = user.metadata.name ?? "";
          return (
            <Checkbox
              key={id}
              id={`team-member-${id}`}
              label={user.spec?.displayName ? `${user.spec.displayName} (${id})` : id}
              isChecked={members.has(id)}
              onChange={(_e, on) => {
                const next = new Set(members);
                if (on) next.add(id);
                else next.delete(id);
                setMembers(next);
              }}
            />
          );
        })}
      </FormGroup>
    </FormModal>
  );
}

/** The teams the user belongs to, each read by name (members may read their own teams, not list all). */
function useOwnTeams(session: Session): WatchedList<Team> {
  const [state, setState] = useState<WatchedList<Team>>({ items: [], loading: true });
  const names = session.teams.join(",");
  useEffect(() => {
    const wanted = names ? names.split(",") : [];
    Promise.allSettled(wanted.map((name) => api.get<Team>(mgmt("teams", name)))).then((answers) => {
      const failed = answers.find((a) => a.status === "rejected");
      setState({
        items: answers.flatMap((a) => (a.status === "fulfilled" ? [a.value] : [])),
        loading: false,
        error: failed?.status === "rejected" ? failed.reason : undefined,
      });
    });
  }, [names]);
  return state;
}

export default function TeamsPage() {
  const session = useSession();
  const listsAll = session.can("list", "teams");
  const all = useWatchList<Team>(listsAll ? mgmt("teams") : undefined);
  const own = useOwnTeams(session);
  const teams = listsAll ? all : own;
  const users = useWatchList<User>(session.can("list", "users") ? mgmt("users") : undefined);
  const paged = usePaged(
    teams.items,
    (t) => `${t.metadata.name} ${t.spec?.displayName} ${(t.spec?.users ?? []).join(" ")}`,
  );
  const [editing, setEditing] = useState<Team | "new">();
  const [deleting, setDeleting] = useState<Team>();
  const create = session.can("create", "teams") ? (
    <Button variant="primary" onClick={() => setEditing("new")}>
      Create Team
    </Button>
  ) : undefined;
  return (
    <PageSection>
      <Title headingLevel="h1">{listsAll ? "Teams" : "Your teams"}</Title>
      <ListToolbar label="teams" paged={paged} actions={create} />
      <ErrorAlert error={teams.error} title="Teams cannot be listed" />
      <ResourceList
        label="Teams"
        list={teams}
        rows={paged.visible}
        searching={!!paged.search}
        empty={
          listsAll
            ? { title: "No teams yet", body: "Create a team to give several users the same access.", action: create }
            : { title: "No teams", body: "You belong to no team." }
        }
        rowName={(team) => team.metadata.name ?? ""}
        columns={[
          { title: "Name", cell: (team) => team.metadata.name },
          { title: "Display Name", cell: (team) => team.spec?.displayName },
          { title: "Members", cell: (team) => (team.spec?.users ?? []).join(", ") || "None" },
          { title: "Created", cell: (team) => <TimeAgo value={team.metadata.creationTimestamp} /> },
        ]}
        actions={(team) => {
          const name = team.metadata.name ?? "";
          return [
            ...(session.can("update", "teams", name)
              ? [{ title: "Edit members", onClick: () => setEditing(team) }]
              : []),
            { isSeparator: true },
            ...(session.can("delete", "teams", name) ? [{ title: "Delete", onClick: () => setDeleting(team) }] : []),
          ];
        }}
      />
      {editing && (
        <TeamForm
          team={editing === "new" ? undefined : editing}
          users={users.items}
          onClose={() => setEditing(undefined)}
        />
      )}
      {deleting && (
        <ConfirmDelete
          what="team"
          name={deleting.metadata.name ?? ""}
          onConfirm={() => api.remove(mgmt("teams", deleting.metadata.name))}
          onClose={() => setDeleting(undefined)}
        />
      )}
    </PageSection>
  );
}
