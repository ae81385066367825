// Follows projects and virtual cluster instances (a StoreInformer over their keys) and keeps three promises:
//  - a deleting project keeps its finalizer while its namespace has instances or spaces, saying so in status (phase
//    Terminating, condition InstancesRemaining naming them); once they are gone it deletes the rest of the namespace
//    (project secrets, and apps, which it waits for while their agents uninstall them), then loses the finalizer,
//    so a project made again with the name starts empty;
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
const RELEASES = `/${GROUP}/helmreleases/`;
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
  readonly prefixes = [PROJECTS, INSTANCES, SPACES, RELEASES];

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
      if (record.key.startsWith(SPACES) || record.key.startsWith(RELEASES)) continue;
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
    if (event.record.key.startsWith(SPACES) || event.record.key.startsWith(RELEASES)) {
      // A deleting project waits for its spaces and apps too: look again when one goes.
      if (event.type === "delete") this.dependentDeleted(JSON.parse(event.record.value) as KubeObject);
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

  private dependentDeleted(object: KubeObject): void {
    const project = projectOfNamespace(
      this.options.settings.current().projectNamespacePrefix,
      object.metadata.namespace,
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

  /** A deleting project: report what it waits for, or release it. */
  private async project(name: string): Promise<void> {
    let project: Project;
    try {
      project = (await this.store("projects").get(context(), { name })) as Project;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return;
      throw error;
    }
    if (!project.metadata.deletionTimestamp || !project.metadata.finalizers?.includes(PROJECT_FINALIZER)) return;
    const namespace = projectNamespace(this.options.settings.current().projectNamespacePrefix, name);
    const instances = (await this.store("virtualclusterinstances").list(context(), { namespace })).items;
    const spaces = (await this.store("spaceinstances").list(context(), { namespace })).items;
    if (instances.length + spaces.length > 0) {
      await this.reportWaiting(project, "InstancesRemain", instancesMessage(namespace, instances, spaces));
      return;
    }
    const apps = await this.deleteContents(namespace);
    if (apps.length > 0) await this.reportWaiting(project, "AppsUninstalling", appsMessage(namespace, apps));
    else await this.release(project);
  }

  /** Phase Terminating with the InstancesRemaining condition saying what the deletion waits for. */
  private async reportWaiting(project: Project, reason: string, message: string): Promise<void> {
    const old = project.status?.conditions?.find((c) => c.type === INSTANCES_REMAINING);
    if (project.status?.phase === "Terminating" && old?.message === message) return;
    const condition: Condition = {
      type: INSTANCES_REMAINING,
      status: "True",
      reason,
      message,
      lastTransitionTime: old?.status === "True" ? old.lastTransitionTime : formatTimestamp(new Date()),
    };
    const conditions = [...(project.status?.conditions ?? []).filter((c) => c.type !== INSTANCES_REMAINING), condition];
    await this.store("projects")
      .patch(
        context(),
        { name: project.metadata.name ?? "", subresource: "status" },
        "merge",
        { metadata: { uid: project.metadata.uid }, status: { phase: "Terminating", conditions } },
        { fieldManager: MANAGER },
      )
      .catch(ignore("NotFound"));
  }

  /**
   * Deletes what a project's namespace holds besides instances and spaces: its project secrets, and its apps, whose
   * uninstall finalizers their agents release. Returns the apps still there.
   */
  private async deleteContents(namespace: string): Promise<KubeObject[]> {
    const secrets = this.store("projectsecrets");
    for (const secret of (await secrets.list(context(), { namespace })).items) {
      await secrets.delete(context(), { namespace, name: secret.metadata.name ?? "" }, {}).catch(ignore("NotFound"));
    }
    const releases = this.store("helmreleases");
    const apps = (await releases.list(context(), { namespace })).items;
    for (const app of apps) {
      if (app.metadata.deletionTimestamp) continue;
      await releases.delete(context(), { namespace, name: app.metadata.name ?? "" }, {}).catch(ignore("NotFound"));
    }
    return (await releases.list(context(), { namespace })).items;
  }

  /** Takes the project's finalizer off: the store then deletes it. */
  private async release(project: Project): Promise<void> {
    await this.store("projects")
      .patch(
        context(),
        { name: project.metadata.name ?? "" },
        "merge",
        {
          metadata: {
            uid: project.metadata.uid,
            resourceVersion: project.metadata.resourceVersion,
            finalizers: (project.metadata.finalizers ?? []).filter((f) => f !== PROJECT_FINALIZER),
          },
        },
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

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

function namesOf(items: KubeObject[]): string {
  const names = items.map((item) => item.metadata.name ?? "");
  return names.slice(0, NAMES_SHOWN).join(", ") + (names.length > NAMES_SHOWN ? ", ..." : "");
}

function instancesMessage(namespace: string, instances: KubeObject[], spaces: KubeObject[]): string {
  const kinds = [
    instances.length ? plural(instances.length, "virtual cluster instance", "virtual cluster instances") : "",
    spaces.length ? plural(spaces.length, "space", "spaces") : "",
  ].filter(Boolean);
  const shown = namesOf([...instances, ...spaces]);
  return `waiting for ${kinds.join(" and ")} in namespace "${namespace}" to be deleted (${shown}); delete them to finish deleting the project`;
}

function appsMessage(namespace: string, apps: KubeObject[]): string {
  return `waiting for ${plural(apps.length, "app", "apps")} in namespace "${namespace}" to be uninstalled by their clusters' agents (${namesOf(apps)})`;
}
