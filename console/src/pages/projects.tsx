// Projects the caller may see (the server lists only those) with their members, Create Project and Edit members
// where allowed; below a project, its page (project-detail.tsx) and its virtual clusters' pages
// (virtual-cluster.tsx).

import { Button, PageSection, Title } from "@patternfly/react-core";
import { useState } from "react";
import { ErrorAlert, ListToolbar, TimeAgo, usePaged } from "../components/common.tsx";
import { projectPath } from "../components/instances.tsx";
import { ProjectForm } from "../components/project-form.tsx";
import { ConfirmDelete, ResourceList } from "../components/resource-list.tsx";
import { api, mgmt } from "../lib/api.ts";
import type { Project } from "../lib/kube.ts";
import { memberText, roleIn } from "../lib/project-role.ts";
import { Link, navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";
import { ProjectDetail } from "./project-detail.tsx";
import { InstanceDetail } from "./virtual-cluster.tsx";

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

export default function ProjectsPage({ rest }: { rest: string[] }) {
  if (rest[0] && rest[1] === "virtualclusters" && rest[2]) return <InstanceDetail project={rest[0]} name={rest[2]} />;
  return rest[0] ? <ProjectDetail project={rest[0]} /> : <ProjectList />;
}
