// Apps the platform asks this agent to install with Helm (HelmRelease, agent-api.ts): `helm upgrade --install`
// against the virtual cluster's API server (its admin kubeconfig) or, for a space, the host acting as the space's
// own apps identity `platform:apps:<namespace>` (bound to the host's `edit` role in that namespace alone, so a chart
// cannot write into another space), and `helm uninstall` when the HelmRelease goes.
// Helm runs in the background (a request answers Pending meanwhile) with its own homes in
// <data-dir>/helm-releases/<uid>/ (0700). The agent never sees a chart repository: a request that would install
// answers `wantsChart`, and the platform sends the chart archive it fetched (with credentials that stay on the
// platform); the archive and the values go to 0600 files for the run. The outcome is kept per HelmRelease
// (state.json), so a generation is installed once; a failure is tried again after a pause.

import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { KubeObject } from "../apimachinery/types.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";
import type { HelmReleaseRequest, HelmReleaseState, HelmReleaseTarget } from "../http/tunnel/agent-api.ts";
import { KubeApiError } from "../virtualcluster/kube/kube-api-error.ts";
import type { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import { type HelmBinary, type HelmRun, helmEnvironment, runHelm } from "./helm.ts";

const HELM_TIMEOUT_MS = 10 * 60_000;
const RETRY_FAILED_MS = 30_000;
const APPS_BINDING = "platform-apps";
const APPS_LABEL = { "app.kubernetes.io/managed-by": "virtualcluster-platform-agent-apps" };

/** The host identity Helm acts as in a space. */
export const spaceAppsUser = (namespace: string) => `platform:apps:${namespace}`;

export interface HelmReleasesOptions {
  /** <agent data dir>/helm-releases */
  dir: string;
  helm?: HelmBinary;
  /** The agent's host kubeconfig (JSON, agentKubeconfig()): a space's release acts through it as the apps user. */
  hostKubeconfig: string;
  /** As the agent's own identity: the apps RoleBinding in a space. */
  http: KubeHttp;
  /** The admin kubeconfig of a virtual cluster run here, once it runs; whether it is run here at all. */
  virtualClusters: { adminKubeconfig(uid: string): string | undefined; has(uid: string): boolean };
  /** Whether a host namespace is a space this agent keeps. */
  isSpace(namespace: string): boolean;
  logger?: Logger;
}

interface Stored extends HelmReleaseState {
  /** When a failure happened (ms): tried again after RETRY_FAILED_MS. */
  failedAt?: number;
  /** The space's namespace, for a space's release (its apps binding stays while one is there). */
  space?: string;
}

/** The state the platform reads: the stored one without the agent's bookkeeping. */
function answer({ failedAt: _failed, space: _space, ...state }: Stored): HelmReleaseState {
  return state;
}

export class HelmReleases {
  readonly #options: HelmReleasesOptions;
  readonly #running = new Map<string, Promise<void>>();

  constructor(options: HelmReleasesOptions) {
    this.#options = options;
  }

  #paths(uid: string) {
    const dir = join(this.#options.dir, uid);
    return {
      dir,
      state: join(dir, "state.json"),
      values: join(dir, "values.yaml"),
      chart: join(dir, "chart.tgz"),
      kubeconfig: join(dir, "space.kubeconfig"),
      home: join(dir, "helm"),
    };
  }

  async put(uid: string, request: HelmReleaseRequest): Promise<HelmReleaseState> {
    if (!this.#options.helm) return { phase: "Failed", message: "helm is not on the agent's machine" };
    if (this.#running.has(uid)) return { phase: "Pending", message: "helm is running" };
    const stored = await this.#stored(uid);
    if (stored?.generation === request.generation) {
      if (stored.phase === "Deployed") return answer(stored);
      if (stored.phase === "Failed" && Date.now() - (stored.failedAt ?? 0) < RETRY_FAILED_MS) return answer(stored);
    }
    const kubeconfig = await this.#kubeconfig(uid, request.target);
    if ("waiting" in kubeconfig) return { phase: "Pending", message: kubeconfig.waiting };
    if (!request.archive) return { phase: "Pending", wantsChart: true, message: "waiting for the chart" };
    this.#start(uid, () => this.#install(uid, request, kubeconfig.file));
    return { phase: "Pending", message: "helm upgrade --install started" };
  }

  async delete(uid: string, target: HelmReleaseTarget): Promise<HelmReleaseState> {
    if (this.#running.has(uid)) return { phase: "Pending", message: "helm is running" };
    const paths = this.#paths(uid);
    const gone =
      "virtualCluster" in target
        ? !this.#options.virtualClusters.has(target.virtualCluster)
        : !this.#options.isSpace(target.space);
    // The virtual cluster or space went with everything in it: nothing is left to uninstall.
    if (gone || !this.#options.helm || !existsSync(paths.state)) {
      await rm(paths.dir, { recursive: true, force: true });
      return { phase: "Gone" };
    }
    const kubeconfig = await this.#kubeconfig(uid, target);
    if ("waiting" in kubeconfig) return { phase: "Pending", message: kubeconfig.waiting };
    this.#start(uid, () => this.#uninstall(uid, target, kubeconfig.file));
    return { phase: "Pending", message: "helm uninstall started" };
  }

  /** Waits for the Helm runs under way (the agent is stopping). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#running.values());
  }

  #start(uid: string, work: () => Promise<void>): void {
    const run = work()
      .catch((error: unknown) =>
        this.#store(uid, { phase: "Failed", message: (error as Error).message, failedAt: Date.now() }),
      )
      .catch((error: unknown) => this.#options.logger?.warn({ release: uid, err: String(error) }, "helm run failed"))
      .finally(() => this.#running.delete(uid));
    this.#running.set(uid, run);
  }

  async #install(uid: string, request: HelmReleaseRequest, kubeconfig: string): Promise<void> {
    const paths = this.#paths(uid);
    const { target } = request;
    const namespace = "virtualCluster" in target ? target.namespace : target.space;
    const space = "space" in target ? target.space : undefined;
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    await writeFile(paths.values, request.values ?? "", { mode: 0o600 });
    try {
      await writeFile(paths.chart, Buffer.from(request.archive ?? "", "base64"), { mode: 0o600 });
      const args = [
        "upgrade",
        "--install",
        target.releaseName,
        paths.chart,
        // name=value forms: no value is ever read as a flag of its own.
        `--namespace=${namespace}`,
        `--values=${paths.values}`,
        "--output=json",
        ...("virtualCluster" in target ? ["--create-namespace"] : []),
      ];
      const run = await this.#helm(uid, kubeconfig, args);
      if (run.code !== 0) throw new Error(`helm upgrade --install failed: ${lastLine(run)}`);
      const release = JSON.parse(run.stdout) as { version?: number; chart?: { metadata?: { version?: string } } };
      await this.#store(uid, {
        space,
        phase: "Deployed",
        generation: request.generation,
        revision: release.version,
        chartVersion: release.chart?.metadata?.version,
        appliedTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        message:
          `revision ${release.version} of ${request.chart} ${release.chart?.metadata?.version ?? ""} in namespace ${namespace}`.trim(),
      });
      this.#options.logger?.info({ release: target.releaseName, revision: release.version }, "helm release installed");
    } catch (error) {
      await this.#store(uid, {
        space,
        phase: "Failed",
        generation: request.generation,
        message: (error as Error).message,
        failedAt: Date.now(),
      });
    } finally {
      await rm(paths.chart, { force: true });
    }
  }

  async #uninstall(uid: string, target: HelmReleaseTarget, kubeconfig: string): Promise<void> {
    const namespace = "virtualCluster" in target ? target.namespace : target.space;
    const run = await this.#helm(uid, kubeconfig, ["uninstall", target.releaseName, `--namespace=${namespace}`]);
    if (run.code !== 0 && !/not found/i.test(run.stderr)) {
      throw new Error(`helm uninstall failed: ${lastLine(run)}`);
    }
    await rm(this.#paths(uid).dir, { recursive: true, force: true });
    if (!("virtualCluster" in target)) await this.#unbindSpace(target.space);
    this.#options.logger?.info({ release: target.releaseName }, "helm release uninstalled");
  }

  /** A run of helm with this release's own homes. */
  #helm(uid: string, kubeconfig: string, args: string[]): Promise<HelmRun> {
    const paths = this.#paths(uid);
    const env = helmEnvironment({
      KUBECONFIG: kubeconfig,
      HELM_CONFIG_HOME: join(paths.home, "config"),
      HELM_CACHE_HOME: join(paths.home, "cache"),
      HELM_DATA_HOME: join(paths.home, "data"),
      HELM_REPOSITORY_CONFIG: join(paths.home, "repositories.yaml"),
      HELM_REPOSITORY_CACHE: join(paths.home, "repository"),
    });
    return runHelm(this.#options.helm?.path ?? "helm", args, { env, timeoutMs: HELM_TIMEOUT_MS });
  }

  /** The kubeconfig Helm uses, or why not yet. */
  async #kubeconfig(uid: string, target: HelmReleaseTarget): Promise<{ file: string } | { waiting: string }> {
    if ("virtualCluster" in target) {
      const file = this.#options.virtualClusters.adminKubeconfig(target.virtualCluster);
      return file ? { file } : { waiting: "the virtual cluster is not running here yet" };
    }
    if (!this.#options.isSpace(target.space))
      return { waiting: `the space's namespace "${target.space}" is not ready` };
    await this.#bindSpace(target.space);
    const paths = this.#paths(uid);
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    // The agent's kubeconfig is JSON (agentKubeconfig()): the same credentials, acting as the space's apps user.
    const config = JSON.parse(await readFile(this.#options.hostKubeconfig, "utf8")) as {
      users?: { user?: Record<string, unknown> }[];
    };
    for (const entry of config.users ?? []) if (entry.user) entry.user.as = spaceAppsUser(target.space);
    await writeFile(paths.kubeconfig, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    return { file: paths.kubeconfig };
  }

  async #bindSpace(namespace: string): Promise<void> {
    const binding: KubeObject = {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "RoleBinding",
      metadata: { name: APPS_BINDING, namespace, labels: APPS_LABEL },
      roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "edit" },
      subjects: [{ apiGroup: RBAC_GROUP, kind: "User", name: spaceAppsUser(namespace) }],
    };
    await this.#options.http
      .request({ method: "POST", path: `/apis/${RBAC_GROUP}/v1/namespaces/${namespace}/rolebindings`, body: binding })
      .catch((error: unknown) => {
        if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      });
  }

  async #unbindSpace(namespace: string): Promise<void> {
    for (const uid of await readdir(this.#options.dir).catch(() => [])) {
      if ((await this.#stored(uid))?.space === namespace) return;
    }
    await this.#options.http
      .request({
        method: "DELETE",
        path: `/apis/${RBAC_GROUP}/v1/namespaces/${namespace}/rolebindings/${APPS_BINDING}`,
      })
      .catch(() => undefined);
  }

  async #stored(uid: string): Promise<Stored | undefined> {
    const file = this.#paths(uid).state;
    if (!existsSync(file)) return undefined;
    return JSON.parse(await readFile(file, "utf8")) as Stored;
  }

  async #store(uid: string, state: Stored): Promise<void> {
    const paths = this.#paths(uid);
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    await writeFile(paths.state, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  }
}

const lastLine = (run: HelmRun) =>
  (run.stderr || run.stdout)
    .trim()
    .split("\n")
    .filter(Boolean)
    .at(-1)
    ?.replace(/^Error:\s*/, "") ?? `exit ${run.code}`;
