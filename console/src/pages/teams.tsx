// Teams: list with search and paging (live), create, edit members, delete with confirmation.

import {
  Button,
  Checkbox,
  Form,
  FormGroup,
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
import { useWatchList } from "../lib/use-watch-list.ts";

function TeamForm({ team, users, onClose }: { team?: Team; users: User[]; onClose: () => void }) {
  const editing = !!team;
  const [name, setName] = useState(team?.metadata.name ?? "");
  const [displayName, setDisplayName] = useState(team?.spec?.displayName ?? "");
  const [members, setMembers] = useState(new Set(team?.spec?.users ?? []));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const spec = { displayName, users: [...members] };
      if (editing) await api.patch(mgmt("teams", name), { spec });
      else
        await api.create(mgmt("teams"), {
          apiVersion: "management.platform.sh/v1",
          kind: "Team",
          metadata: { name },
          spec,
        });
      onClose();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="team-form-title">
      <ModalHeader title={editing ? `Edit team ${name}` : "Create Team"} labelId="team-form-title" />
      <ModalBody>
        <Form id="team-form" onSubmit={submit}>
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
          <ErrorAlert error={error} title="The team was not saved" />
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="team-form" isLoading={busy} isDisabled={busy}>
          {editing ? "Save" : "Create"}
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
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
      {teams.loading ? (
        <Loading what="teams" />
      ) : paged.filtered.length === 0 ? (
        <Empty
          title={paged.search ? "No team matches" : "No teams yet"}
          body={
            paged.search
              ? "Clear the search to see every team."
              : "Create a team to give several users the same access."
          }
          action={paged.search ? undefined : create}
        />
      ) : (
        <Table aria-label="Teams" variant="compact">
          <Thead>
            <Tr>
              <Th>Name</Th>
              <Th>Display Name</Th>
              <Th>Members</Th>
              <Th>Created</Th>
              <Th screenReaderText="Actions" />
            </Tr>
          </Thead>
          <Tbody>
            {paged.visible.map((team) => {
              const name = team.metadata.name ?? "";
              return (
                <Tr key={name}>
                  <Td dataLabel="Name">{name}</Td>
                  <Td dataLabel="Display Name">{team.spec?.displayName}</Td>
                  <Td dataLabel="Members">{(team.spec?.users ?? []).join(", ") || "None"}</Td>
                  <Td dataLabel="Created">
                    <TimeAgo value={team.metadata.creationTimestamp} />
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
                        { title: "Edit members", onClick: () => setEditing(team) },
                        { isSeparator: true },
                        { title: "Delete", onClick: () => setDeleting(team) },
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
          onConfirm={() => api.remove(mgmt("teams", deleting.metadata.name)).then(() => undefined)}
          onClose={() => setDeleting(undefined)}
        />
      )}
    </PageSection>
  );
}
