// Create Project and Edit members: a name (checked before it is sent), a display name, members with their roles.

import { Button, FormGroup, FormSelect, FormSelectOption, TextInput } from "@patternfly/react-core";
import { useState } from "react";
import { MEMBER_KINDS, PROJECT_ROLES } from "../../../src/apis/management/v1/project-schema.ts";
import { api, mgmt } from "../lib/api.ts";
import type { Project } from "../lib/kube.ts";
import { Field, type FieldErrors, missing } from "./form.tsx";
import { FormModal } from "./resource-list.tsx";

const V1 = "management.platform.sh/v1";
type Member = NonNullable<NonNullable<Project["spec"]>["members"]>[number];
/** A DNS label: a project name, and its namespace's suffix. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function ProjectForm({ project, onClose }: { project?: Project; onClose: () => void }) {
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
              onChange={(_e, v) => update(index, { kind: MEMBER_KINDS.find((kind) => kind === v) })}
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
              onChange={(_e, v) => update(index, { clusterRole: PROJECT_ROLES.find((role) => role === v) })}
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
