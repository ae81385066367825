// VirtualClusterInstance (namespaced in project namespaces, listable across them): a virtual cluster registered with
// the platform. Creating one needs an existing project for its namespace and gets it a client-certificate CA from the
// platform (status.clientCertificateAuthority, which nobody else can overwrite); the virtual cluster reports its
// state (serving CA, online, heartbeat, version) through the status subresource.

import { fieldError } from "../../../apimachinery/field-errors.ts";
import type { AuthorizationFacts } from "../../../registry/authorization-facts.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ActionHandler, RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField, runtimeField } from "./granting-fields.ts";
import { bindRegisteringRuntime, checkInstanceWrite, type InstanceCallers } from "./instance-writes.ts";
import { projectOfNamespace } from "./project.ts";
import {
  CLUSTER_AGENT_FINALIZER,
  type ClusterLookup,
  checkAllowedCluster,
  checkClusterPlacement,
  hostNamespaceErrors,
  requireProject,
} from "./project-placement.ts";
import type { Project } from "./project-schema.ts";
import { type VirtualClusterInstance, virtualClusterInstanceSchema } from "./virtualclusterinstance-schema.ts";

export type { VirtualClusterInstance } from "./virtualclusterinstance-schema.ts";

export interface InstanceAuthority {
  /** Creates the client CA of an instance about to be stored and returns its certificate (PEM). */
  prepare(instance: { namespace: string; name: string; uid: string }): Promise<string>;
  /** Whether this write is the platform's own, allowed to set status.clientCertificateAuthority. */
  writesServerStatus(context: RequestContext): boolean;
}

export interface VirtualClusterInstanceOptions {
  /** Prefix of project namespaces, read at every use. */
  namespacePrefix(): string;
  /** A project as stored now. */
  project(name: string): Promise<Project | undefined>;
  /** The platform's client CAs; without it instances get none (unit tests of other rules). */
  authority?: InstanceAuthority;
  /** Who writes (a runtime, or the user or team it acts for); without it every caller is a person (unit tests). */
  callers?: InstanceCallers;
  kubeconfig?: ActionHandler;
  /** Connected clusters: an instance placed on one is created there by its agent. */
  clusters?: ClusterLookup;
  /** The user or team a caller acts as: a placed instance without an owner gets its creator. */
  callerOwner?(context: RequestContext): { user?: string; team?: string } | undefined;
}

/** Whether the platform has the instance's cluster agent run it (spec.clusterRef.cluster, not external). */
export function placedOnCluster(instance: VirtualClusterInstance): boolean {
  return Boolean(instance.spec?.clusterRef?.cluster) && instance.spec?.external !== true;
}

/** The host namespace of a placed instance: spec.clusterRef.namespace, or `<project namespace>-v-<name>`. */
export function placedNamespace(instance: VirtualClusterInstance): string {
  const given = instance.spec?.clusterRef?.namespace;
  return (
    given || `${instance.metadata.namespace ?? ""}-v-${instance.metadata.name ?? ""}`.slice(0, 63).replace(/-+$/, "")
  );
}

const KIND = { group: GROUP, kind: "VirtualClusterInstance" };
/** host, host:port, IPv4 or [IPv6], optionally with :port; no scheme, no path. */
const HOST_PORT =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** Whoever may read an instance may get a kubeconfig for it; its credentials reach the whole instance. */
export const VIRTUAL_CLUSTER_INSTANCE_AUTHORIZATION: AuthorizationFacts = {
  readerRights: { kubeconfig: ["create"] },
  credentials: [{ subresource: "kubeconfig", verbs: "*", boundedBy: "instance" }],
  grants: [ownerField(), accessRulesField("spec.access"), runtimeField()],
};

export function createVirtualClusterInstanceDefinition(options: VirtualClusterInstanceOptions): ResourceDefinition {
  const prefix = () => options.namespacePrefix();

  const projectFor = (instance: VirtualClusterInstance) => requireProject(options, KIND.kind, instance);
  const checkCluster = (instance: VirtualClusterInstance, project: Project) =>
    checkAllowedCluster(KIND.kind, instance, instance.spec?.clusterRef?.cluster, project);

  /** A virtual cluster the platform runs on a connected cluster: held until the agent removed it again. */
  const place = async (instance: VirtualClusterInstance, clusters: ClusterLookup, context: RequestContext) => {
    await checkClusterPlacement(KIND.kind, instance, instance.spec?.clusterRef?.cluster ?? "", context, clusters);
    const clusterRef = instance.spec?.clusterRef ?? {};
    if (!clusterRef.namespace && instance.metadata.name) clusterRef.namespace = placedNamespace(instance);
    clusterRef.virtualCluster ||= instance.metadata.name ?? undefined;
    // The runtime's key belongs to the owner: by default whoever placed it.
    if (!instance.spec?.owner?.user && !instance.spec?.owner?.team) {
      const owner = options.callerOwner?.(context);
      if (owner && instance.spec) instance.spec.owner = owner;
    }
    const finalizers = instance.metadata.finalizers ?? [];
    if (!finalizers.includes(CLUSTER_AGENT_FINALIZER)) {
      instance.metadata.finalizers = [...finalizers, CLUSTER_AGENT_FINALIZER];
    }
  };

  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "VirtualClusterInstance",
    plural: "virtualclusterinstances",
    singular: "virtualclusterinstance",
    shortNames: ["vci", "vc", "virtualcluster", "virtualclusters"],
    categories: [CATEGORY],
    namespaced: true,
    description:
      "VirtualClusterInstance is a virtual cluster registered with the platform, in the namespace of its project.",
    schema: virtualClusterInstanceSchema,
    statusSubresource: true,
    authorization: VIRTUAL_CLUSTER_INSTANCE_AUTHORIZATION,
    strategy: {
      async prepareForCreate(instance, context) {
        const project = await projectFor(instance);
        checkCluster(instance, project);
        bindRegisteringRuntime(instance, options.callers?.(context));
        if (options.clusters && placedOnCluster(instance)) await place(instance, options.clusters, context);
        instance.status = { phase: "Pending", online: false };
        if (options.authority) {
          const { namespace = "", name = "", uid = "" } = instance.metadata;
          // generateName: the name is not known yet; the CA is bound to the uid, which is.
          instance.status.clientCertificateAuthority = await options.authority.prepare({ namespace, name, uid });
        }
      },
      async prepareForUpdate(instance, old, context) {
        await checkInstanceWrite(instance, old, options.callers?.(context), context);
        if (instance.spec?.clusterRef?.cluster !== old.spec?.clusterRef?.cluster) {
          const project = await options.project(projectOfNamespace(prefix(), old.metadata.namespace) ?? "");
          if (project) checkCluster(instance, project);
        }
        if (options.authority?.writesServerStatus(context)) return;
        // Server-owned: only the platform sets the client CA.
        const ca = old.status?.clientCertificateAuthority;
        if (ca === undefined) {
          if (instance.status) delete instance.status.clientCertificateAuthority;
        } else {
          instance.status = { ...instance.status, clientCertificateAuthority: ca };
        }
      },
      validateUpdate(instance, old) {
        if (!options.clusters) return [];
        // Placing is create's alone: it checks that the caller may use the cluster, and sets the namespace and the
        // finalizer that removes the workload. An update that placed an instance would skip all three.
        if (!placedOnCluster(old)) {
          if (!placedOnCluster(instance)) return [];
          return [
            fieldError.forbidden(
              "spec.clusterRef",
              "an instance becomes a virtual cluster the platform runs on a connected cluster only when it is created so: delete it and create one with spec.clusterRef.cluster (and without spec.external)",
            ),
          ];
        }
        const was = old.spec?.clusterRef ?? {};
        const now = instance.spec?.clusterRef ?? {};
        if (
          now.cluster === was.cluster &&
          now.namespace === was.namespace &&
          instance.spec?.external === old.spec?.external
        ) {
          return [];
        }
        return [
          fieldError.forbidden(
            "spec.clusterRef",
            "a virtual cluster the platform runs on a connected cluster cannot move (cluster, namespace, external): delete it and create another",
          ),
        ];
      },
      validate(instance) {
        if (options.clusters && placedOnCluster(instance)) {
          const problems = hostNamespaceErrors(instance.spec?.clusterRef?.namespace);
          if (problems.length) return problems;
        }
        const host = instance.spec?.template?.accessPoint?.ingress?.host;
        if (host && !HOST_PORT.test(host)) {
          return [
            fieldError.invalid(
              "spec.template.accessPoint.ingress.host",
              host,
              "must be a host name or IP address with an optional :port, without scheme or path (e.g. vc1.example.com or vc1.example.com:8443)",
            ),
          ];
        }
        return [];
      },
    },
    subresources: options.kubeconfig ? { kubeconfig: options.kubeconfig } : undefined,
    columns: [
      {
        name: "Project",
        type: "string",
        description: "Project the instance belongs to.",
        cell: (i) => projectOfNamespace(prefix(), i.metadata.namespace) ?? "",
      },
      {
        name: "Phase",
        type: "string",
        description: "Pending, Ready, Failed or Sleeping.",
        cell: (i) => i.status?.phase ?? "",
      },
      {
        name: "Online",
        type: "boolean",
        description: "Whether the virtual cluster is connected to the platform.",
        cell: (i) => i.status?.online === true,
      },
      {
        name: "Heartbeat",
        type: "date",
        description: "Time since the virtual cluster last reported to the platform.",
        cell: (i) => i.status?.lastHeartbeatTime,
      },
      {
        name: "External",
        type: "boolean",
        description: "Deployed outside the platform and registered itself.",
        cell: (i) => i.spec?.external === true,
      },
      {
        name: "Cluster",
        type: "string",
        priority: 1,
        description: "Connected cluster the virtual cluster runs on.",
        cell: (i) => i.spec?.clusterRef?.cluster ?? "",
      },
      {
        name: "Ingress",
        type: "string",
        priority: 1,
        description: "Host of the ingress endpoint, when enabled.",
        cell: (i) => {
          const ingress = i.spec?.template?.accessPoint?.ingress;
          return ingress?.enabled ? (ingress.host ?? "") : "";
        },
      },
    ],
    selectableFields: {
      "status.phase": (i) => i.status?.phase,
      "spec.external": (i) => String(i.spec?.external === true),
    },
  });
}
