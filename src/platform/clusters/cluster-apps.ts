// HelmReleases, reconciled by the replica holding the tunnel of their target's cluster: the target is looked up in
// the HelmRelease's own project namespace only (a name there is all a release can say, so it never reaches another
// project's virtual cluster or space), the chart repository in the Config's apps.repositories, and the agent is asked
// to install with its helm (src/agent/helm-releases.ts); its answer becomes the status (phase, revision, the Ready
// condition). When the agent wants the chart (a generation it has not installed) the platform fetches the archive
// with the repository's credentials and sends the archive alone: an agent may be run by a non-admin Cluster owner,
// so no credential of the Config ever goes to one. Where the cluster's agent has no helm the release fails saying so
// (the console shows the helm command instead). Deleting a HelmRelease has the agent uninstall it; the finalizer
// goes once the agent confirms, or at once when the target itself is gone. A tunnel that opens looks again at the
// releases on its own cluster only: an agent reconnecting in a loop makes no work for other clusters.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import {
  HELM_RELEASE_FINALIZER,
  type HelmRelease,
  type HelmReleaseStatus,
  releaseNameOf,
} from "../../apis/management/v1/helmrelease.ts";
import { projectOfNamespace } from "../../apis/management/v1/project.ts";
import { type SpaceInstance, spaceNamespace } from "../../apis/management/v1/spaceinstance.ts";
import { placedOnCluster, type VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import { ChartUnavailable, fetchChartArchive } from "../../apps/chart-archive.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { ChartRepositorySettings } from "../../config/system-settings.ts";
import { normaliseAgentError, normaliseHelmReleaseState } from "../../http/tunnel/agent-answers.ts";
import {
  callAgent,
  type HelmReleaseRequest,
  type HelmReleaseState,
  type HelmReleaseTarget,
} from "../../http/tunnel/agent-api.ts";
import type { Registry } from "../../registry/registry.ts";
import { RetryingQueue } from "../../registry/retrying-queue.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { formatTimestamp } from "../../registry/time.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";
import type { ConnectedAgent, TunnelHub } from "./tunnel-hub.ts";

const MANAGER = "virtualcluster-platform-cluster-apps";
const RELEASES = `/${GROUP}/helmreleases/`;
const INSTANCES = `/${GROUP}/virtualclusterinstances/`;
const SPACES = `/${GROUP}/spaceinstances/`;
const AGENT_TIMEOUT_MS = 30_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 15_000;
const DEFAULT_RESYNC_MS = 60_000;

export interface ClusterAppsOptions {
  registry: Registry;
  hub: TunnelHub;
  settings: LiveSettings;
  resyncMs?: number;
  logger?: Logger;
}

const context = () => systemContext("system:cluster-apps", MANAGER);

/** The release is not where it should be yet: looked at again later. */
class NotYet extends Error {}

/** Where a release goes, as resolved in its own project namespace. */
type Resolved =
  | { found: false; why: string }
  | { found: true; cluster: string; target: HelmReleaseTarget; placed: boolean; deleting: boolean };

export class ClusterApps {
  readonly #options: ClusterAppsOptions;
  readonly #informer: StoreInformer;
  readonly #queue: RetryingQueue;
  /** namespace/name of every HelmRelease. */
  readonly #releases = new Set<string>();
  /** namespace/name → the cluster its target was last found on. */
  readonly #clusterOf = new Map<string, string>();
  #resync?: NodeJS.Timeout;
  #unlisten?: () => void;
  #stopped = false;
  readonly prefixes = [RELEASES, INSTANCES, SPACES];

  constructor(options: ClusterAppsOptions) {
    this.#options = options;
    this.#informer = new StoreInformer(options.registry.storage, this, (error) =>
      options.logger?.warn({ err: String(error) }, "cluster apps informer failed"),
    );
    this.#queue = new RetryingQueue({
      firstRetryMs: FIRST_RETRY_MS,
      maxRetryMs: MAX_RETRY_MS,
      failed: (key, error) => {
        if (!(error instanceof NotYet))
          options.logger?.warn({ helmRelease: key, err: String(error) }, "helm release task failed");
      },
    });
  }

  async start(): Promise<void> {
    await this.#informer.start();
    this.#unlisten = this.#options.hub.listen({ connected: (agent) => this.#onCluster(agent.cluster) });
    this.#resync = setInterval(() => this.#everything(), this.#options.resyncMs ?? DEFAULT_RESYNC_MS);
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
    this.#releases.clear();
    this.#clusterOf.clear();
    for (const record of records) this.#seen(record, false);
  }

  apply(event: WatchEvent): void {
    this.#seen(event.record, event.type === "delete");
  }

  #seen(record: StoredRecord, deleted: boolean): void {
    const [namespace = "", name = ""] = record.key.slice(record.key.indexOf("/", GROUP.length + 2) + 1).split("/");
    if (!record.key.startsWith(RELEASES)) {
      // A target appeared, changed or went: the namespace's releases are looked at again.
      for (const key of this.#releases) if (key.startsWith(`${namespace}/`)) this.#schedule(key);
      return;
    }
    const key = `${namespace}/${name}`;
    if (deleted) {
      this.#releases.delete(key);
      this.#clusterOf.delete(key);
      this.#queue.forget(key);
      return;
    }
    this.#releases.add(key);
    this.#schedule(key);
  }

  #everything(): void {
    for (const key of this.#releases) this.#schedule(key);
  }

  #onCluster(cluster: string): void {
    for (const [key, on] of this.#clusterOf) if (on === cluster) this.#schedule(key);
  }

  #schedule(key: string): void {
    if (this.#stopped || !this.#releases.has(key)) return;
    this.#queue.run(
      key,
      () => this.#reconcile(key),
      () => this.#schedule(key),
    );
  }

  // ---- one release --------------------------------------------------------------------------------------------

  async #reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split("/");
    const releases = this.#store("helmreleases");
    const release = (await this.#get(releases, namespace, name)) as HelmRelease | undefined;
    if (!release) return;
    const resolved = await this.#resolve(release);
    if (resolved.found) this.#clusterOf.set(key, resolved.cluster);
    else this.#clusterOf.delete(key);
    if (release.metadata.deletionTimestamp) {
      await this.#uninstall(release, resolved);
      return;
    }
    if (!resolved.found) {
      await this.#report(release, { phase: "Failed" }, "TargetNotFound", resolved.why);
      return;
    }
    if (!resolved.placed) {
      const why = "the virtual cluster is not placed on a connected cluster: install with the helm command instead";
      await this.#report(release, { phase: "Failed", cluster: resolved.cluster }, "NotOnConnectedCluster", why);
      return;
    }
    const cluster = (await this.#get(this.#store("clusters"), undefined, resolved.cluster)) as Cluster | undefined;
    if (!cluster?.status?.helmVersion) {
      const why = `the agent of cluster "${resolved.cluster}" has no helm: install helm on its machine (or give the agent --helm-binary), or run the helm command the console's Apps page shows`;
      await this.#report(release, { phase: "Failed", cluster: resolved.cluster }, "HelmMissing", why);
      return;
    }
    const agent = this.#options.hub.get(resolved.cluster);
    if (!agent) return; // another replica holds the tunnel, or none does: nothing to do here
    const repositoryName = release.spec?.chart?.repository ?? "";
    const repository = this.#options.settings.current().apps.repositories.find((r) => r.name === repositoryName);
    if (!repository) {
      const why = `the platform Config's apps.repositories has no repository "${repositoryName}"`;
      await this.#report(release, { phase: "Failed", cluster: resolved.cluster }, "RepositoryNotFound", why);
      return;
    }
    const request: HelmReleaseRequest = {
      target: resolved.target,
      chart: release.spec?.chart?.name ?? "",
      values: release.spec?.values,
      generation: release.metadata.generation ?? 1,
    };
    let answer = await this.#call(agent, "PUT", release, request);
    if (answer.wantsChart) {
      const chart = await this.#chart(release, repository, resolved.cluster);
      if (!chart) return;
      answer = await this.#call(agent, "PUT", release, { ...request, ...chart });
    }
    await this.#reportAnswer(release, resolved.cluster, answer);
    if (answer.phase === "Pending") throw new NotYet();
  }

  /** The chart archive the agent asked for, fetched here; undefined (the release failed, saying why) when it cannot be. */
  async #chart(
    release: HelmRelease,
    repository: ChartRepositorySettings,
    cluster: string,
  ): Promise<{ version: string; archive: string } | undefined> {
    const chart = release.spec?.chart?.name ?? "";
    try {
      const fetched = await fetchChartArchive(repository, chart, release.spec?.chart?.version || undefined);
      return { version: fetched.version, archive: fetched.archive.toString("base64") };
    } catch (error) {
      if (!(error instanceof ChartUnavailable)) throw error;
      await this.#report(release, { phase: "Failed", cluster }, "ChartUnavailable", error.message);
      return undefined;
    }
  }

  async #uninstall(release: HelmRelease, resolved: Resolved): Promise<void> {
    if (!release.metadata.finalizers?.includes(HELM_RELEASE_FINALIZER)) return;
    if (resolved.found && resolved.placed && !resolved.deleting) {
      const agent = this.#options.hub.get(resolved.cluster);
      if (!agent) return;
      const answer = await this.#call(agent, "DELETE", release, resolved.target);
      if (answer.phase !== "Gone") {
        await this.#report(release, { phase: "Uninstalling" }, "Uninstalling", answer.message ?? "helm uninstall runs");
        throw new NotYet();
      }
    }
    await this.#store("helmreleases")
      .patch(
        context(),
        { namespace: release.metadata.namespace, name: release.metadata.name ?? "" },
        "merge",
        {
          metadata: {
            uid: release.metadata.uid,
            resourceVersion: release.metadata.resourceVersion,
            finalizers: (release.metadata.finalizers ?? []).filter((f) => f !== HELM_RELEASE_FINALIZER),
          },
        },
        { fieldManager: MANAGER },
      )
      .catch(ignoreNotFound);
  }

  /** The target, looked up in the release's own namespace only. */
  async #resolve(release: HelmRelease): Promise<Resolved> {
    const namespace = release.metadata.namespace ?? "";
    const project = projectOfNamespace(this.#options.settings.current().projectNamespacePrefix, namespace) ?? "";
    const target = release.spec?.target ?? {};
    const releaseName = releaseNameOf(release);
    if (target.space) {
      const space = (await this.#get(this.#store("spaceinstances"), namespace, target.space)) as
        | SpaceInstance
        | undefined;
      if (!space) return { found: false, why: `project "${project}" has no space "${target.space}"` };
      return {
        found: true,
        cluster: space.spec?.clusterRef?.cluster ?? "",
        target: { space: spaceNamespace(space), releaseName },
        placed: true,
        deleting: Boolean(space.metadata.deletionTimestamp),
      };
    }
    const name = target.virtualClusterInstance ?? "";
    const instance = (await this.#get(this.#store("virtualclusterinstances"), namespace, name)) as
      | VirtualClusterInstance
      | undefined;
    if (!instance) return { found: false, why: `project "${project}" has no virtual cluster instance "${name}"` };
    return {
      found: true,
      cluster: instance.spec?.clusterRef?.cluster ?? "",
      target: { virtualCluster: instance.metadata.uid ?? "", namespace: target.namespace || "default", releaseName },
      placed: placedOnCluster(instance),
      deleting: Boolean(instance.metadata.deletionTimestamp),
    };
  }

  async #reportAnswer(release: HelmRelease, cluster: string, answer: HelmReleaseState): Promise<void> {
    const generation = release.metadata.generation ?? 1;
    if (answer.phase === "Deployed" && answer.generation === generation) {
      await this.#report(
        release,
        {
          phase: "Deployed",
          cluster,
          revision: answer.revision,
          chartVersion: answer.chartVersion,
          observedGeneration: generation,
          lastAppliedTime: answer.appliedTime,
        },
        "Deployed",
        answer.message ?? "",
      );
    } else if (answer.phase === "Failed") {
      await this.#report(
        release,
        { phase: "Failed", cluster, observedGeneration: generation },
        "HelmFailed",
        answer.message ?? "",
      );
    } else {
      await this.#report(release, { phase: "Pending", cluster }, "Installing", answer.message ?? "helm runs");
    }
  }

  /** Writes the status when it changed: its fields and the Ready condition. */
  async #report(release: HelmRelease, status: HelmReleaseStatus, reason: string, message: string): Promise<void> {
    const now = release.status ?? {};
    const ready = now.conditions?.find((c) => c.type === "Ready");
    const readyStatus = status.phase === "Deployed" ? "True" : "False";
    const same =
      ready?.status === readyStatus &&
      ready.reason === reason &&
      ready.message === message &&
      (Object.keys(status) as (keyof HelmReleaseStatus)[]).every((field) => now[field] === status[field]);
    if (same) return;
    const condition = {
      type: "Ready",
      status: readyStatus,
      reason,
      message,
      lastTransitionTime:
        ready?.status === readyStatus && ready.lastTransitionTime
          ? ready.lastTransitionTime
          : formatTimestamp(new Date()),
    };
    await this.#store("helmreleases")
      .patch(
        context(),
        { namespace: release.metadata.namespace, name: release.metadata.name ?? "", subresource: "status" },
        "merge",
        { metadata: { uid: release.metadata.uid }, status: { ...status, conditions: [condition] } },
        { fieldManager: MANAGER },
      )
      .catch(ignoreNotFound);
  }

  async #call(
    agent: ConnectedAgent,
    method: "PUT" | "DELETE",
    release: HelmRelease,
    body: unknown,
  ): Promise<HelmReleaseState> {
    const path = `/helmreleases/${encodeURIComponent(release.metadata.uid ?? "")}`;
    const answer = await callAgent<unknown>(agent.session, method, path, body, AGENT_TIMEOUT_MS);
    if (answer.status >= 400) {
      throw new Error(
        `the agent answered ${method} ${path} with ${answer.status}: ${normaliseAgentError(answer.body)}`,
      );
    }
    return normaliseHelmReleaseState(answer.body);
  }

  async #get(store: GenericStore, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    try {
      return await store.get(context(), { namespace, name });
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return undefined;
      throw error;
    }
  }

  #store(plural: string): GenericStore {
    const store = this.#options.registry.genericStore(GROUP, plural);
    if (!store) throw new Error(`${plural} is not registered`);
    return store;
  }
}

const ignoreNotFound = (error: unknown) => {
  if (!(isStatusError(error) && error.reason === "NotFound")) throw error;
};
