// Follows projects and virtual cluster instances (a StoreInformer over their keys) and keeps three promises:
//  - a deleting project keeps its finalizer while its namespace has instances, saying so in status (phase
//    Terminating, condition InstancesRemaining naming them), and loses it when the last one is gone;
//  - a new instance's client CA is stored (instance-cas.ts);
//  - a deleted instance's CA key and the access keys of its token-form kubeconfigs are deleted.
// Work runs outside the informer's call, one task per object at a time; a failed task is retried after a pause.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { projectNamespace, projectOfNamespace } from "../../apis/management/v1/project.ts";
import {
  type Condition,
  INSTANCES_REMAINING,
  PROJECT_FINALIZER,
  type Project,
} from "../../apis/management/v1/project-schema.ts";
import type { VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import { KeyedQueue } from "../../registry/keyed-queue.ts";
import type { Registry } from "../../registry/registry.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { formatTimestamp } from "../../registry/time.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";
import { type InstanceCertificateAuthorities, instanceCaKey } from "./instance-cas.ts";
import { KUBECONFIG_INSTANCE_LABEL } from "./kubeconfig-issuer.ts";

const MANAGER = "virtualcluster-platform-projects";
const PROJECTS = `/${GROUP}/projects/`;
const INSTANCES = `/${GROUP}/virtualclusterinstances/`;
const SPACES = `/${GROUP}/spaceinstances/`;
const RETRY_MS = 1000;
/** Names listed in the condition message; the count is always complete. */
const NAMES_SHOWN = 10;

export interface ProjectControllerOptions {
  registry: Registry;
  settings: LiveSettings;
  cas: InstanceCertificateAuthorities;
  logger?: Logger;
}

const context = () => systemContext("system:project-controller", MANAGER);

export class ProjectController {
  private readonly options: ProjectControllerOptions;
  private readonly informer: StoreInformer;
  private readonly queue = new KeyedQueue();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  /** Uids of instances whose CA is known to be stored. */
  private readonly stored = new Set<string>();
  private stopped = false;
  readonly prefixes = [PROJECTS, INSTANCES, SPACES];

  constructor(options: ProjectControllerOptions) {
    this.options = options;
    this.informer = new StoreInformer(options.registry.storage, this, (error) => this.failed(error, "informer"));
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
    for (const timer of this.timers) clearTimeout(timer);
  }

  // ---- InformerHandler ----------------------------------------------------------------------------------------

  reset(records: StoredRecord[]): void {
    const live = new Map<string, string>();
    for (const record of records) {
      if (record.key.startsWith(SPACES)) continue;
      const object = JSON.parse(record.value) as Project | VirtualClusterInstance;
      if (record.key.startsWith(PROJECTS))
        this.schedule(`project:${object.metadata.name}`, () => this.project(object.metadata.name ?? ""));
      else {
        const { namespace = "", name = "", uid = "" } = object.metadata;
        live.set(instanceCaKey(namespace, name), uid);
        this.instanceChanged(object as VirtualClusterInstance);
      }
    }
    this.schedule("orphans", () => this.options.cas.removeOrphans(live));
  }

  apply(event: WatchEvent): void {
    if (event.record.key.startsWith(SPACES)) {
      // A deleting project waits for its spaces too: look again when one goes.
      if (event.type === "delete") this.spaceDeleted(JSON.parse(event.record.value) as KubeObject);
      return;
    }
    const object = JSON.parse(event.record.value) as Project | VirtualClusterInstance;
    if (event.record.key.startsWith(PROJECTS)) {
      if (event.type !== "delete")
        this.schedule(`project:${object.metadata.name}`, () => this.project(object.metadata.name ?? ""));
      return;
    }
    if (event.type === "delete") this.instanceDeleted(object as VirtualClusterInstance);
    else this.instanceChanged(object as VirtualClusterInstance);
  }

  // ---- work ---------------------------------------------------------------------------------------------------

  private instanceChanged(instance: VirtualClusterInstance): void {
    const { uid = "" } = instance.metadata;
    if (this.stored.has(uid) || instance.metadata.deletionTimestamp) return;
    this.schedule(`instance:${uid}`, async () => {
      const current = await this.current(instance);
      if (!current) return;
      await this.options.cas.signer(current);
      this.stored.add(uid);
    });
  }

  private instanceDeleted(instance: VirtualClusterInstance): void {
    const { namespace = "", name = "", uid = "" } = instance.metadata;
    this.stored.delete(uid);
    this.schedule(`instance:${uid}`, async () => {
      await this.options.cas.remove(namespace, name, uid);
      await this.revokeKubeconfigKeys(uid);
    });
    const project = projectOfNamespace(this.options.settings.current().projectNamespacePrefix, namespace);
    if (project) this.schedule(`project:${project}`, () => this.project(project));
  }

  private spaceDeleted(space: KubeObject): void {
    const project = projectOfNamespace(
      this.options.settings.current().projectNamespacePrefix,
      space.metadata.namespace,
    );
    if (project) this.schedule(`project:${project}`, () => this.project(project));
  }

  /** The instance as stored now, if it is still the same one. */
  private async current(instance: VirtualClusterInstance): Promise<VirtualClusterInstance | undefined> {
    const { namespace, name = "", uid } = instance.metadata;
    try {
      const found = (await this.store("virtualclusterinstances").get(context(), {
        namespace,
        name,
      })) as VirtualClusterInstance;
      return found.metadata.uid === uid && !found.metadata.deletionTimestamp ? found : undefined;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return undefined;
      throw error;
    }
  }

  private async revokeKubeconfigKeys(uid: string): Promise<void> {
    const keys = this.store("ownedaccesskeys");
    const list = await keys.list(context(), { labelSelector: `${KUBECONFIG_INSTANCE_LABEL}=${uid}` });
    for (const key of list.items) {
      await keys
        .delete(context(), { name: key.metadata.name ?? "" }, { preconditions: { uid: key.metadata.uid } })
        .catch(ignore("NotFound", "Conflict"));
    }
  }

  /** A deleting project: report the instances it waits for, or release it. */
  private async project(name: string): Promise<void> {
    const projects = this.store("projects");
    let project: Project;
    try {
      project = (await projects.get(context(), { name })) as Project;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return;
      throw error;
    }
    if (!project.metadata.deletionTimestamp || !project.metadata.finalizers?.includes(PROJECT_FINALIZER)) return;
    const namespace = projectNamespace(this.options.settings.current().projectNamespacePrefix, name);
    const instances = await this.store("virtualclusterinstances").list(context(), { namespace });
    const spaces = await this.store("spaceinstances").list(context(), { namespace });
    const remaining = { items: [...instances.items, ...spaces.items] };
    const ref = { name };
    if (remaining.items.length === 0) {
      await projects
        .patch(
          context(),
          ref,
          "merge",
          {
            metadata: {
              uid: project.metadata.uid,
              resourceVersion: project.metadata.resourceVersion,
              finalizers: project.metadata.finalizers.filter((f) => f !== PROJECT_FINALIZER),
            },
          },
          { fieldManager: MANAGER },
        )
        .catch(ignore("NotFound"));
      return;
    }
    const names = remaining.items.map((item) => item.metadata.name ?? "");
    const shown = names.slice(0, NAMES_SHOWN).join(", ") + (names.length > NAMES_SHOWN ? ", ..." : "");
    const kinds = [
      instances.items.length
        ? `${instances.items.length} virtual cluster instance${instances.items.length === 1 ? "" : "s"}`
        : "",
      spaces.items.length ? `${spaces.items.length} space${spaces.items.length === 1 ? "" : "s"}` : "",
    ].filter(Boolean);
    const message = `waiting for ${kinds.join(" and ")} in namespace "${namespace}" to be deleted (${shown}); delete them to finish deleting the project`;
    const old = project.status?.conditions?.find((c) => c.type === INSTANCES_REMAINING);
    if (project.status?.phase === "Terminating" && old?.message === message) return;
    const condition: Condition = {
      type: INSTANCES_REMAINING,
      status: "True",
      reason: "InstancesRemain",
      message,
      lastTransitionTime: old?.status === "True" ? old.lastTransitionTime : formatTimestamp(new Date()),
    };
    const conditions = [...(project.status?.conditions ?? []).filter((c) => c.type !== INSTANCES_REMAINING), condition];
    await projects
      .patch(
        context(),
        { name, subresource: "status" },
        "merge",
        { metadata: { uid: project.metadata.uid }, status: { phase: "Terminating", conditions } },
        { fieldManager: MANAGER },
      )
      .catch(ignore("NotFound"));
  }

  private store(plural: string): GenericStore {
    const store = this.options.registry.genericStore(GROUP, plural);
    if (!store) throw new Error(`${plural} is not registered`);
    return store;
  }

  private schedule(key: string, task: () => Promise<void>): void {
    if (this.stopped) return;
    this.queue.run(key, task).catch((error) => {
      this.failed(error, key);
      if (this.stopped) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.schedule(key, task);
      }, RETRY_MS);
      this.timers.add(timer);
    });
  }

  private failed(error: unknown, what: string): void {
    if (!this.stopped) this.options.logger?.warn({ task: what, err: String(error) }, "project controller task failed");
  }
}

const ignore =
  (...reasons: string[]) =>
  (error: unknown) => {
    if (!(isStatusError(error) && reasons.includes(error.reason))) throw error;
  };
