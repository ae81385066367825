// VirtualClusterInstance (namespaced in project namespaces, listable across them): a virtual cluster registered with
// the platform. Creating one needs an existing project for its namespace and gets it a client-certificate CA from the
// platform (status.clientCertificateAuthority, which nobody else can overwrite); the virtual cluster reports its
// state (serving CA, online, heartbeat, version) through the status subresource.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import type { AuthorizationFacts } from "../../../registry/authorization-facts.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ActionHandler, RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField, runtimeField } from "./granting-fields.ts";
import { bindRegisteringRuntime, checkInstanceWrite, type InstanceCallers } from "./instance-writes.ts";
import { projectNamespace, projectOfNamespace } from "./project.ts";
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
}

const KIND = { group: GROUP, kind: "VirtualClusterInstance" };
/** host, host:port, IPv4 or [IPv6], optionally with :port; no scheme, no path. */
const HOST_PORT =
  /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

function invalid(instance: VirtualClusterInstance, errs: FieldError[]): never {
  throw errors.invalid(KIND, instance.metadata.name ?? instance.metadata.generateName ?? "", errs);
}

/** Whoever may read an instance may get a kubeconfig for it; its credentials reach the whole instance. */
export const VIRTUAL_CLUSTER_INSTANCE_AUTHORIZATION: AuthorizationFacts = {
  readerRights: { kubeconfig: ["create"] },
  credentials: [{ subresource: "kubeconfig", verbs: "*", boundedBy: "instance" }],
  grants: [ownerField(), accessRulesField("spec.access"), runtimeField()],
};

export function createVirtualClusterInstanceDefinition(options: VirtualClusterInstanceOptions): ResourceDefinition {
  const prefix = () => options.namespacePrefix();

  /** The instance's project: it must exist and not be deleting (422 naming the project otherwise). */
  const projectFor = async (instance: VirtualClusterInstance): Promise<Project> => {
    const namespace = instance.metadata.namespace;
    if (!namespace)
      invalid(instance, [fieldError.required("metadata.namespace", "instances live in a project namespace")]);
    const name = projectOfNamespace(prefix(), namespace);
    const example = projectNamespace(prefix(), "default");
    if (!name) {
      invalid(instance, [
        fieldError.invalid(
          "metadata.namespace",
          namespace,
          `not a project namespace: instances live in the namespace "${prefix()}<project>" of their project, e.g. "${example}" for the project "default"`,
        ),
      ]);
    }
    const project = await options.project(name);
    if (!project) {
      invalid(instance, [
        fieldError.invalid(
          "metadata.namespace",
          namespace,
          `project "${name}" does not exist: create the project "${name}" first, or use the namespace of an existing project`,
        ),
      ]);
    }
    if (project.metadata.deletionTimestamp) {
      invalid(instance, [
        fieldError.invalid("metadata.namespace", namespace, `project "${name}" is being deleted: no new instances`),
      ]);
    }
    return project;
  };

  const checkCluster = (instance: VirtualClusterInstance, project: Project) => {
    const cluster = instance.spec?.clusterRef?.cluster;
    const allowed = (project.spec?.allowedClusters ?? []).map((c) => c.name);
    if (!cluster || allowed.length === 0 || allowed.includes("*") || allowed.includes(cluster)) return;
    invalid(instance, [fieldError.notSupported("spec.clusterRef.cluster", cluster, allowed)]);
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
      validate(instance) {
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
