// A virtual cluster's page: its state (live), conditions, the actions the caller may take, the requests made in it
// and the changes made to it (for those who may read audit events).

import { Breadcrumb, BreadcrumbItem, Button, Label, PageSection, Title } from "@patternfly/react-core";
import { useState } from "react";
import { AuditTrail } from "../components/audit-trail.tsx";
import { Empty, Loading, TimeAgo } from "../components/common.tsx";
import { Details, NotReadable } from "../components/details.tsx";
import { type Dialog, InstanceDialogs, instanceActions } from "../components/instance-dialogs.tsx";
import { InstanceOnline, projectPath } from "../components/instances.tsx";
import { SimpleTable } from "../components/simple-table.tsx";
import { mgmt } from "../lib/api.ts";
import type { Instance } from "../lib/kube.ts";
import { Link } from "../lib/router.tsx";
import { useRulesIn, useSession } from "../lib/session.ts";
import { useWatchList } from "../lib/use-watch-list.ts";

function Conditions({ instance }: { instance: Instance }) {
  const conditions = instance.status?.conditions ?? [];
  if (conditions.length === 0) return <p>The virtual cluster has reported no conditions.</p>;
  return (
    <SimpleTable
      label="Conditions"
      columns={["Type", "Status", "Reason", "Message", "Since"]}
      rows={conditions}
      rowKey={(c) => c.type}
      cells={(c) => [
        c.type,
        <Label key="status" isCompact color={c.status === "True" ? "green" : c.status === "False" ? "red" : "grey"}>
          {c.status}
        </Label>,
        c.reason,
        c.message,
        <TimeAgo key="since" value={c.lastTransitionTime} />,
      ]}
    />
  );
}

export function InstanceDetail({ project, name }: { project: string; name: string }) {
  const session = useSession();
  const namespace = `${session.projectNamespacePrefix}${project}`;
  const rules = useRulesIn(namespace);
  const watched = useWatchList<Instance>(
    mgmt("namespaces", namespace, "virtualclusterinstances"),
    `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
  );
  const instance = watched.items[0];
  const [dialog, setDialog] = useState<Dialog>();
  const actions = instanceActions(session, rules, name, setDialog);
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem>
          <Link to="/projects">Projects</Link>
        </BreadcrumbItem>
        <BreadcrumbItem>
          <Link to={projectPath(project)}>{project}</Link>
        </BreadcrumbItem>
        <BreadcrumbItem isActive>{name}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Virtual cluster {instance?.spec?.displayName || name}</Title>
      {watched.error ? (
        <NotReadable what="virtual cluster" error={watched.error} />
      ) : watched.loading ? (
        <Loading what="the virtual cluster" />
      ) : !instance ? (
        <Empty title="No virtual cluster here" body={`Project ${project} has no virtual cluster ${name}.`} />
      ) : (
        <>
          <div className="vcp-actions">
            {actions.map((action) => (
              <Button key={action.title} variant="secondary" onClick={action.onClick}>
                {action.title}
              </Button>
            ))}
          </div>
          <Details
            items={[
              ["Name", name],
              [
                "Project",
                <Link key="project" to={projectPath(project)}>
                  {project}
                </Link>,
              ],
              ["Online", <InstanceOnline key="online" instance={instance} />],
              ["Phase", instance.status?.phase ?? "Pending"],
              ["Message", instance.status?.message],
              ["Last heartbeat", <TimeAgo key="heartbeat" value={instance.status?.lastHeartbeatTime} />],
              ["Kubernetes version", instance.status?.kubernetesVersion],
              ["Host cluster", instance.spec?.clusterRef?.cluster],
              ["Host namespace", instance.spec?.clusterRef?.namespace],
              ["Created", <TimeAgo key="created" value={instance.metadata.creationTimestamp} />],
            ]}
          />
          <section className="vcp-detail-section">
            <Title headingLevel="h2">Conditions</Title>
            <Conditions instance={instance} />
          </section>
        </>
      )}
      <AuditTrail
        title="Requests in this virtual cluster"
        label="Requests in this virtual cluster"
        selector={`instance=${namespace}/${name}`}
      />
      <AuditTrail
        title="Changes to this virtual cluster"
        label="Changes to this virtual cluster"
        selector={`objectRef.resource=virtualclusterinstances,objectRef.namespace=${namespace},objectRef.name=${name}`}
      />
      <InstanceDialogs project={project} namespace={namespace} dialog={dialog} close={() => setDialog(undefined)} />
    </PageSection>
  );
}
