// Teams: list with search and paging (live), create, edit members, delete with confirmation.

import { Button, Checkbox, FormGroup, PageSection, TextInput, Title } from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged } from "../components/common.tsx";
import { ConfirmDelete, FormModal, ResourceList } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Team, User } from "../lib/kube.ts";
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
      onClose={onClose}
    >
      <FormGroup label="Name" isRequired fieldId="team-name">
        <TextInput id="team-name" isRequired value={name} onChange={(_e, v) => setName(v)} isDisabled={editing} />
      </FormGroup>
      <FormGroup label="Display Name" fieldId="team-display-name">
        <TextInput id="team-display-name" value={displayName} onChange={(_e, v) => setDisplayName(v)} />
      </FormGroup>
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

export default function TeamsPage() {
  const teams = useWatchList<Team>(mgmt("teams"));
  const users = useWatchList<User>(mgmt("users"));
  const paged = usePaged(
    teams.items,
    (t) => `${t.metadata.name} ${t.spec?.displayName} ${(t.spec?.users ?? []).join(" ")}`,
  );
  const [editing, setEditing] = useState<Team | "new">();
  const [deleting, setDeleting] = useState<Team>();
  const create = (
    <Button variant="primary" onClick={() => setEditing("new")}>
      Create Team
    </Button>
  );
  return (
    <PageSection>
      <Title headingLevel="h1">Teams</Title>
      <ListToolbar label="teams" paged={paged} actions={create} />
      <ErrorAlert error={teams.error} title="Teams cannot be listed" />
      <ResourceList
        label="Teams"
        list={teams}
        rows={paged.visible}
        searching={!!paged.search}
        empty={{ title: "No teams yet", body: "Create a team to give several users the same access.", action: create }}
        rowName={(team) => team.metadata.name ?? ""}
        columns={[
          { title: "Name", cell: (team) => team.metadata.name },
          { title: "Display Name", cell: (team) => team.spec?.displayName },
          { title: "Members", cell: (team) => (team.spec?.users ?? []).join(", ") || "None" },
          { title: "Created", cell: (team) => <TimeAgo value={team.metadata.creationTimestamp} /> },
        ]}
        actions={(team) => [
          { title: "Edit members", onClick: () => setEditing(team) },
          { isSeparator: true },
          { title: "Delete", onClick: () => setDeleting(team) },
        ]}
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
