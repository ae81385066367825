// What the platform has its agents make on their clusters, reconciled by the replica holding each cluster's tunnel
// (whichever replica an agent is connected to does the work; a reconnect moves it):
//  - a space: its namespace with RoleBindings for the project's owner and members by their project role; deleting
//    the space deletes the namespace, and its finalizer goes once the agent says the namespace is gone;
//  - a virtual cluster placed on the cluster (spec.clusterRef.cluster, not external): the agent runs this project's
//    runtime for it with a dedicated access key the platform makes (owned by the instance's owner, scoped to the
//    role virtualcluster of this one instance); deleting the instance stops it, removes its namespace, revokes the
//    key and then releases the finalizer;
//  - the project secrets delivered to a space or a virtual cluster (ProjectSecret spec.deliverTo), sent with the
//    space's or instance's request: the agent keeps them as Kubernetes Secrets there and removes those no longer sent.
// Objects are followed through a StoreInformer (spaces, instances, projects: a project's members feed its spaces'
// RoleBindings; a project secret's deliverTo feeds the Secrets of the spaces and instances it names); each object is worked on one task at a time, retried with backoff until it is where it should be,
// and everything on a cluster is looked at again when its agent connects and every resync interval.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import { SCOPE_ROLES } from "../../apis/management/v1/ownedaccesskey-schema.ts";
import { projectOfNamespace } from "../../apis/management/v1/project.ts";
import { CLUSTER_AGENT_FINALIZER } from "../../apis/management/v1/project-placement.ts";
import type { Project } from "../../apis/management/v1/project-schema.ts";
import { deliveriesTo, type ProjectSecret } from "../../apis/management/v1/projectsecret.ts";
import { type SpaceInstance, spaceNamespace } from "../../apis/management/v1/spaceinstance.ts";
import {
  placedNamespace,
  placedOnCluster,
  type VirtualClusterInstance,
} from "../../apis/management/v1/virtualclusterinstance.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import { normaliseAgentError, normaliseWorkloadState } from "../../http/tunnel/agent-answers.ts";
import {
  callAgent,
  type DeliveredSecret,
  type SpaceMember,
  type SpaceRequest,
  type VirtualClusterRequest,
  type WorkloadState,
} from "../../http/tunnel/agent-api.ts";
import type { Registry } from "../../registry/registry.ts";
import { RetryingQueue } from "../../registry/retrying-queue.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";
import type { ConnectedAgent, TunnelHub } from "./tunnel-hub.ts";

const MANAGER = "virtualcluster-platform-cluster-workloads";
const SPACES = `/${GROUP}/spaceinstances/`;
const INSTANCES = `/${GROUP}/virtualclusterinstances/`;
const PROJECTS = `/${GROUP}/projects/`;
const PROJECT_SECRETS = `/${GROUP}/projectsecrets/`;
/** On a virtual cluster's runtime key: the instance's uid (the key is revoked with the instance). */
export const RUNTIME_KEY_LABEL = "management.platform.sh/runtime-of";
const AGENT_TIMEOUT_MS = 30_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 15_000;
export const DEFAULT_RESYNC_MS = 60_000;

type Kind = "space" | "instance";

interface Tracked {
  kind: Kind;
  namespace: string;
  name: string;
  cluster: string;
}

export interface ClusterWorkloadsOptions {
  registry: Registry;
  hub: TunnelHub;
  settings: LiveSettings;
  resyncMs?: number;
  logger?: Logger;
}

const context = () => systemContext("system:cluster-workloads", MANAGER);
const keyOf = (kind: Kind, namespace: string, name: string) => `${kind}:${namespace}/${name}`;

/** Thrown when an object is not where it should be yet: the task runs again later. */
class NotYet extends Error {}

export class ClusterWorkloads {
  readonly #options: ClusterWorkloadsOptions;
  readonly #informer: StoreInformer;
  readonly #queue: RetryingQueue;
  readonly #tracked = new Map<string, Tracked>();
  #resync?: NodeJS.Timeout;
  #unlisten?: () => void;
  #stopped = false;
  readonly prefixes = [SPACES, INSTANCES, PROJECTS, PROJECT_SECRETS];

  constructor(options: ClusterWorkloadsOptions) {
    this.#options = options;
    this.#informer = new StoreInformer(options.registry.storage, this, (error) =>
      options.logger?.warn({ err: String(error) }, "cluster workloads informer failed"),
    );
    this.#queue = new RetryingQueue({
      firstRetryMs: FIRST_RETRY_MS,
      maxRetryMs: MAX_RETRY_MS,
      failed: (key, error) => {
        if (!(error instanceof NotYet))
          options.logger?.warn({ object: key, err: String(error) }, "cluster workload task failed");
      },
    });
  }

  async start(): Promise<void> {
    await this.#informer.start();
    this.#unlisten = this.#options.hub.listen({ connected: (agent) => this.#all(agent.cluster) });
    this.#resync = setInterval(() => {
      for (const agent of this.#options.hub.all()) this.#all(agent.cluster);
    }, this.#options.resyncMs ?? DEFAULT_RESYNC_MS);
    this.#resync.unref();
  }

  stop(): void {
    this.#stopped = true;
    this.#unlisten?.();
    clearInterval(this.#resync);
    this.#queue.stop();
    this.#informer.stop();
  }

  // ---- InformerHandler ----------------------------------------------------------------------------------------

  reset(records: StoredRecord[]): void {
    this.#tracked.clear();
    for (const record of records) this.#seen(record, false);
  }

  apply(event: WatchEvent): void {
    this.#seen(event.record, event.type === "delete");
  }

  #seen(record: StoredRecord, deleted: boolean): void {
    if (record.key.startsWith(PROJECT_SECRETS)) {
      // Any change may add, change or withdraw a delivery: the namespace's spaces and instances are sent again.
      this.#namespaceChanged(record.key.slice(PROJECT_SECRETS.length).split("/")[0] ?? "");
      return;
    }
    const object = JSON.parse(record.value) as KubeObject;
    const { namespace = "", name = "" } = object.metadata;
    if (record.key.startsWith(PROJECTS)) {
      if (!deleted) this.#projectChanged(name);
      return;
    }
    const kind: Kind = record.key.startsWith(SPACES) ? "space" : "instance";
    const cluster =
      kind === "space"
        ? (object as SpaceInstance).spec?.clusterRef?.cluster
        : placedOnCluster(object as VirtualClusterInstance)
          ? (object as VirtualClusterInstance).spec?.clusterRef?.cluster
          : undefined;
    const key = keyOf(kind, namespace, name);
    if (deleted || !cluster) {
      this.#tracked.delete(key);
      this.#queue.forget(key);
      return;
    }
    this.#tracked.set(key, { kind, namespace, name, cluster });
    this.#schedule(key);
  }

  #projectChanged(project: string): void {
    const prefix = this.#options.settings.current().projectNamespacePrefix;
    for (const [key, tracked] of this.#tracked) {
      if (tracked.kind === "space" && projectOfNamespace(prefix, tracked.namespace) === project) this.#schedule(key);
    }
  }

  #namespaceChanged(namespace: string): void {
    for (const [key, tracked] of this.#tracked) if (tracked.namespace === namespace) this.#schedule(key);
  }

  #all(cluster: string): void {
    for (const [key, tracked] of this.#tracked) if (tracked.cluster === cluster) this.#schedule(key);
  }

  // ---- scheduling ---------------------------------------------------------------------------------------------

  #schedule(key: string): void {
    if (this.#stopped) return;
    const tracked = this.#tracked.get(key);
    // Another replica holds the tunnel, or none does: nothing to do here.
    if (!tracked || !this.#options.hub.get(tracked.cluster)) return;
    this.#queue.run(
      key,
      () => this.#run(key),
      () => this.#schedule(key),
    );
  }

  /**
   * One task, with what it acts on looked up as it starts, not when it was queued: the object may have gone and come
   * back placed on another cluster, and the cluster's agent may have reconnected (a new tunnel) in between.
   */
  async #run(key: string): Promise<void> {
    const tracked = this.#tracked.get(key);
    const agent = tracked && this.#options.hub.get(tracked.cluster);
    if (!tracked || !agent) return;
    await (tracked.kind === "space" ? this.#space(tracked, agent) : this.#instance(tracked, agent));
  }

  // ---- spaces -------------------------------------------------------------------------------------------------

  async #space(tracked: Tracked, agent: ConnectedAgent): Promise<void> {
    const spaces = this.#store("spaceinstances");
    const space = (await this.#current(spaces, tracked)) as SpaceInstance | undefined;
    // Read after the task started: one placed elsewhere is for that cluster's agent (its event retracks it).
    if (!space || space.spec?.clusterRef?.cluster !== tracked.cluster) return;
    const namespace = spaceNamespace(space);
    const path = `/spaces/${encodeURIComponent(namespace)}`;
    if (space.metadata.deletionTimestamp) {
      if (!space.metadata.finalizers?.includes(CLUSTER_AGENT_FINALIZER)) return;
      const answer = await this.#call(agent, "DELETE", `${path}?uid=${space.metadata.uid}`);
      if (answer.phase !== "Gone") {
        await this.#report(spaces, space, {
          phase: "Terminating",
          reason: "NamespaceDeleting",
          message: answer.message,
        });
        throw new NotYet();
      }
      await this.#release(spaces, space);
      return;
    }
    const project =
      projectOfNamespace(this.#options.settings.current().projectNamespacePrefix, tracked.namespace) ?? "";
    const request: SpaceRequest = {
      project,
      space: space.metadata.name ?? "",
      uid: space.metadata.uid ?? "",
      members: await this.#members(project),
      secrets: await this.#deliveredSecrets(tracked.namespace, { space: tracked.name }),
    };
    const answer = await this.#call(agent, "PUT", path, request);
    await this.#report(spaces, space, {
      phase: answer.phase === "Ready" ? "Ready" : answer.phase === "Failed" ? "Failed" : "Pending",
      reason: answer.phase === "Ready" ? "NamespaceReady" : answer.phase === "Failed" ? "NamespaceFailed" : "Creating",
      message:
        answer.message ??
        (answer.phase === "Ready" ? `namespace "${namespace}" on cluster "${tracked.cluster}"` : undefined),
    });
    if (answer.phase === "Pending") throw new NotYet();
  }

  /** The project's owner (admin) and members by role, as a space's RoleBindings name them. */
  async #members(project: string): Promise<SpaceMember[]> {
    const found = (await this.#current(this.#store("projects"), { name: project })) as Project | undefined;
    const members: SpaceMember[] = [];
    const owner = found?.spec?.owner;
    if (owner?.user) members.push({ kind: "User", name: owner.user, role: "admin" });
    if (owner?.team) members.push({ kind: "Team", name: owner.team, role: "admin" });
    for (const member of found?.spec?.members ?? []) {
      members.push({
        kind: member.kind === "Team" ? "Team" : "User",
        name: member.name,
        role: member.clusterRole ?? "view",
      });
    }
    return members;
  }

  /** The project secrets of the namespace whose deliverTo names this space or instance. */
  async #deliveredSecrets(
    namespace: string,
    target: { space: string } | { virtualClusterInstance: string },
  ): Promise<DeliveredSecret[]> {
    const list = await this.#store("projectsecrets").list(context(), { namespace });
    const all = (list.items as ProjectSecret[]).flatMap((secret) =>
      deliveriesTo(secret, target).map((delivery) => ({
        projectSecret: secret.metadata.name ?? "",
        name: delivery.secretName || (secret.metadata.name ?? ""),
        namespace: "space" in target ? undefined : delivery.namespace || "default",
        data: secret.spec?.data ?? {},
      })),
    );
    // Two project secrets naming the same Secret: the first by name (the list's order) has it, every time.
    const seen = new Set<string>();
    return all.filter((secret) => {
      const at = `${secret.namespace ?? ""}/${secret.name}`;
      if (seen.has(at)) return false;
      seen.add(at);
      return true;
    });
  }

  // ---- virtual clusters ---------------------------------------------------------------------------------------

  async #instance(tracked: Tracked, agent: ConnectedAgent): Promise<void> {
    const instances = this.#store("virtualclusterinstances");
    const instance = (await this.#current(instances, tracked)) as VirtualClusterInstance | undefined;
    if (!instance || !placedOnCluster(instance) || instance.spec?.clusterRef?.cluster !== tracked.cluster) return;
    const uid = instance.metadata.uid ?? "";
    const path = `/virtualclusters/${encodeURIComponent(uid)}`;
    if (instance.metadata.deletionTimestamp) {
      if (!instance.metadata.finalizers?.includes(CLUSTER_AGENT_FINALIZER)) return;
      const answer = await this.#call(agent, "DELETE", path);
      if (answer.phase !== "Gone") throw new NotYet();
      await this.#revokeRuntimeKeys(uid);
      await this.#release(instances, instance);
      return;
    }
    const request: VirtualClusterRequest = {
      project: projectOfNamespace(this.#options.settings.current().projectNamespacePrefix, tracked.namespace) ?? "",
      name: tracked.name,
      instanceNamespace: tracked.namespace,
      hostNamespace: placedNamespace(instance),
      secrets: await this.#deliveredSecrets(tracked.namespace, { virtualClusterInstance: tracked.name }),
    };
    let answer = await this.#call(agent, "PUT", path, request);
    if (answer.needsKey) {
      const accessKey = await this.#runtimeKey(instance, request.project);
      if (!accessKey) {
        await this.#report(instances, instance, {
          phase: "Failed",
          reason: "NoOwner",
          message: "the instance has no owner to hold its runtime's access key: set spec.owner",
        });
        return;
      }
      answer = await this.#call(agent, "PUT", path, { ...request, accessKey });
    }
    if (answer.phase === "Failed") {
      await this.#report(instances, instance, { phase: "Failed", reason: "AgentFailed", message: answer.message });
    } else if (
      instance.status?.phase === "Pending" ||
      (instance.status?.phase === "Failed" && !instance.status.online)
    ) {
      await this.#report(instances, instance, {
        phase: "Pending",
        reason: "Starting",
        message: answer.message ?? `starting on cluster "${tracked.cluster}"`,
      });
    }
    if (answer.phase === "Pending") throw new NotYet();
  }

  /**
   * A new access key for the instance's runtime (earlier ones revoked), owned by whoever the instance names as its
   * runtime (spec.runtime, where instances are bound to their runtime) or else its owner; undefined when neither.
   */
  async #runtimeKey(instance: VirtualClusterInstance, project: string): Promise<string | undefined> {
    const named = (instance.spec as { runtime?: { user?: string; team?: string } } | undefined)?.runtime;
    const owner = named?.user || named?.team ? named : instance.spec?.owner;
    if (!owner?.user && !owner?.team) return undefined;
    const { name = "", uid = "" } = instance.metadata;
    await this.#revokeRuntimeKeys(uid);
    const created = await this.#store("ownedaccesskeys").create(
      context(),
      undefined,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "OwnedAccessKey",
        metadata: {
          generateName: `runtime-${name.slice(0, 40).replace(/[-.]+$/, "")}-`,
          labels: { [RUNTIME_KEY_LABEL]: uid },
        },
        spec: {
          ...(owner.user ? { user: owner.user } : { team: owner.team }),
          type: "User",
          displayName: `Runtime of virtual cluster ${name} (project ${project})`,
          description: `Connects the virtual cluster ${instance.metadata.namespace}/${name}, which the platform runs on cluster ${instance.spec?.clusterRef?.cluster}; revoked with the instance.`,
          scope: { roles: [{ role: SCOPE_ROLES.virtualCluster, projects: [project], virtualClusters: [name] }] },
        },
      },
      { fieldManager: MANAGER },
    );
    return (created.spec as { key: string }).key;
  }

  async #revokeRuntimeKeys(uid: string): Promise<void> {
    const keys = this.#store("ownedaccesskeys");
    const list = await keys.list(context(), { labelSelector: `${RUNTIME_KEY_LABEL}=${uid}` });
    for (const key of list.items) {
      await keys
        .delete(context(), { name: key.metadata.name ?? "" }, { preconditions: { uid: key.metadata.uid } })
        .catch(ignore("NotFound", "Conflict"));
    }
  }

  // ---- shared -------------------------------------------------------------------------------------------------

  async #call(agent: ConnectedAgent, method: "PUT" | "DELETE", path: string, body?: unknown): Promise<WorkloadState> {
    const answer = await callAgent<unknown>(agent.session, method, path, body, AGENT_TIMEOUT_MS);
    if (answer.status >= 500)
      throw new Error(
        `the agent answered ${method} ${path} with ${answer.status}: ${normaliseAgentError(answer.body)}`,
      );
    // Untrusted (a Cluster's owner can run its agent): a known phase, a bounded message, or Failed saying why not.
    return normaliseWorkloadState(answer.body);
  }

  /** The object as stored now, if it still exists. */
  async #current(store: GenericStore, ref: { namespace?: string; name: string }): Promise<KubeObject | undefined> {
    try {
      return await store.get(context(), { namespace: ref.namespace || undefined, name: ref.name });
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return undefined;
      throw error;
    }
  }

  /** Writes phase, reason and message when they changed. */
  async #report(
    store: GenericStore,
    object: SpaceInstance | VirtualClusterInstance,
    status: { phase: string; reason?: string; message?: string },
  ): Promise<void> {
    const now = object.status ?? {};
    if (now.phase === status.phase && now.reason === status.reason && now.message === status.message) return;
    await store
      .patch(
        context(),
        { namespace: object.metadata.namespace, name: object.metadata.name ?? "", subresource: "status" },
        "merge",
        {
          metadata: { uid: object.metadata.uid },
          status: { phase: status.phase, reason: status.reason ?? null, message: status.message ?? null },
        },
        { fieldManager: MANAGER },
      )
      .catch(ignore("NotFound"));
  }

  /** Removes the agent's finalizer: the host confirmed it removed what it made. */
  async #release(store: GenericStore, object: KubeObject): Promise<void> {
    await store
      .patch(
        context(),
        { namespace: object.metadata.namespace, name: object.metadata.name ?? "" },
        "merge",
        {
          metadata: {
            uid: object.metadata.uid,
            resourceVersion: object.metadata.resourceVersion,
            finalizers: (object.metadata.finalizers ?? []).filter((f) => f !== CLUSTER_AGENT_FINALIZER),
          },
        },
        { fieldManager: MANAGER },
      )
      .catch(ignore("NotFound"));
  }

  #store(plural: string): GenericStore {
    const store = this.#options.registry.genericStore(GROUP, plural);
    if (!store) throw new Error(`${plural} is not registered`);
    return store;
  }
}

const ignore =
  (...reasons: string[]) =>
  (error: unknown) => {
    if (!(isStatusError(error) && reasons.includes(error.reason))) throw error;
  };
