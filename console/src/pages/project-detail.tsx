// A project's page: its facts, members (Edit members where allowed), its virtual clusters (live, with the actions
// the caller may take) and the changes made to it (for those who may read audit events).

import { Breadcrumb, BreadcrumbItem, Button, PageSection, Title } from "@patternfly/react-core";
import { useState } from "react";
import { AuditTrail } from "../components/audit-trail.tsx";
import { ErrorAlert, ListToolbar, Loading, TimeAgo, usePaged } from "../components/common.tsx";
import { Details, NotReadable, useObject } from "../components/details.tsx";
import { type Dialog, InstanceDialogs, instanceActions } from "../components/instance-dialogs.tsx";
import { InstanceOnline, instancePath } from "../components/instances.tsx";
import { ProjectForm } from "../components/project-form.tsx";
import { ResourceList } from "../components/resource-list.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { mgmt } from "../lib/api.ts";
import type { Instance, Project } from "../lib/kube.ts";
import { roleIn } from "../lib/project-role.ts";
import { Link } from "../lib/router.tsx";
import { useRulesIn, useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

export function ProjectDetail({ project }: { project: string }) {
  const { object, error } = useObject<Project>(mgmt("projects", project));
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/projects">Projects</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{project}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Project {object?.spec?.displayName || project}</Title>
      {error ? (
        <NotReadable what="project" error={error} />
      ) : !object ? (
        <Loading what="the project" />
      ) : (
        <ProjectBody project={project} object={object} />
      )}
    </PageSection>
  );
}

/** A readable project: its facts, members, virtual clusters and audit trail. */
function ProjectBody({ project, object }: { project: string; object: Project }) {
  const session = useSession();
  const namespace = `${session.projectNamespacePrefix}${project}`;
  const rules = useRulesIn(namespace);
  const instances = useWatchList<Instance>(mgmt("namespaces", namespace, "virtualclusterinstances"));
  const paged = usePaged(instances.items, (i) => `${i.metadata.name} ${i.spec?.displayName} ${i.status?.phase}`);
  const [dialog, setDialog] = useState<Dialog>();
  const [editing, setEditing] = useState(false);
  const owner = object.spec?.owner;
  return (
    <>
      <Details
        items={[
          ["Name", project],
          ["Display Name", object.spec?.displayName],
          ["Owner", owner?.user ?? (owner?.team ? `team ${owner.team}` : undefined)],
          [
            "Your role",
            roleIn(session, object) ?? (session.can("get", "projects") ? "platform-wide access" : undefined),
          ],
          ["Namespace", namespace],
          ["Created", <TimeAgo key="created" value={object.metadata.creationTimestamp} />],
        ]}
      />
      <section className="vcp-detail-section">
        <Title headingLevel="h2">Members</Title>
        {session.can("update", "projects", project) && (
          <Button variant="secondary" onClick={() => setEditing(true)}>
            Edit members
          </Button>
        )}
        {(object.spec?.members ?? []).length === 0 ? (
          <p>No members.</p>
        ) : (
          <SimpleTable
            label="Members"
            columns={["Kind", "Name", "Role"]}
            rows={object.spec?.members ?? []}
            rowKey={(m) => `${m.kind}/${m.name}`}
            cells={(m) => [m.kind ?? "User", m.name, m.clusterRole ?? "view"]}
          />
        )}
      </section>
      <section className="vcp-detail-section">
        <Title headingLevel="h2">Virtual clusters</Title>
        <ListToolbar label="virtual clusters" paged={paged} />
        <ErrorAlert error={instances.error} title="Virtual clusters cannot be listed" />
        <ResourceList
          label="Virtual clusters"
          list={instances}
          rows={paged.visible}
          searching={!!paged.search}
          empty={{
            title: "No virtual clusters in this project",
            body: `Create one with: virtualcluster create NAME --project ${project} (a virtual cluster that connects registers itself here).`,
          }}
          rowName={(instance) => instance.metadata.name ?? ""}
          columns={[
            {
              title: "Name",
              cell: (instance) => (
                <Link to={instancePath(project, instance.metadata.name ?? "")}>
                  {instance.spec?.displayName || instance.metadata.name}
                </Link>
              ),
            },
            { title: "Phase", cell: (instance) => instance.status?.phase ?? "Pending" },
            { title: "Online", cell: (instance) => <InstanceOnline instance={instance} /> },
            { title: "Last heartbeat", cell: (instance) => <TimeAgo value={instance.status?.lastHeartbeatTime} /> },
          ]}
          actions={(instance) => instanceActions(session, rules, instance.metadata.name ?? "", setDialog)}
        />
      </section>
      <AuditTrail
        title="Changes to this project"
        label="Changes to this project"
        selector={`objectRef.resource=projects,objectRef.name=${project}`}
      />
      <InstanceDialogs project={project} namespace={namespace} dialog={dialog} close={() => setDialog(undefined)} />
      {editing && <ProjectForm project={object} onClose={() => setEditing(false)} />}
    </>
  );
}
