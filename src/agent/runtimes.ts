// The virtual clusters the platform placed on this cluster, run by the agent as this project's runtime
// (`virtualcluster run`, one child process each, or one container each where podman and the image are here,
// runtime-launch.ts; on a real cluster the same agent could deploy it as a workload):
// its host namespace (labelled with the instance's uid, never taken over), a RoleBinding of the runtime's own host
// identity to the synced kinds in that namespace, a kubeconfig acting as that identity, and the dedicated access key
// the platform made for it (asked for with needsKey when the agent has none). A runtime that exits is started again
// after a growing pause. Deleting stops it, deletes its namespace and forgets its files. What runs is written in
// <data-dir>/virtualclusters/<uid>/ (0700), so a restarted agent starts the same runtimes again. Once a runtime
// runs, the project secrets delivered to it are written through its API as its admin (delivered-secrets.ts).

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { KubeObject } from "../apimachinery/types.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";
import { ADMIN_TOKEN_FILE, CLUSTER_ADMIN_KUBECONFIG } from "../cluster-apiserver/admin-token.ts";
import type { DeliveredSecret, VirtualClusterRequest, WorkloadState } from "../http/tunnel/agent-api.ts";
import { loadKubeAccess } from "../virtualcluster/kube/kube-access.ts";
import { KubeApiError } from "../virtualcluster/kube/kube-api-error.ts";
import { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import { alive } from "../virtualcluster/lifecycle/local-runtime.ts";
import { podman } from "../virtualcluster/lifecycle/podman.ts";
import type { RuntimeContainer } from "../virtualcluster/lifecycle/runtime-container.ts";
import { readRuntimeStatus } from "../virtualcluster/runtime-status.ts";
import { syncDeliveredSecrets } from "./delivered-secrets.ts";
import { MANAGED_BY_AGENT, MANAGED_BY_LABEL, RUNTIME_ROLE, runtimeUser } from "./host-rbac.ts";
import { agentRuntimeContainerName, runtimeLaunch } from "./runtime-launch.ts";

export const RUNTIME_UID_LABEL = "management.platform.sh/virtualclusterinstance-uid";
const BINDING = "platform-virtualcluster";
const FIRST_RESTART_MS = 1_000;
const MAX_RESTART_MS = 60_000;
const STOP_GRACE_MS = 20_000;

/** The platform the runtimes connect to (the one the agent is connected to now). */
export interface PlatformEndpoint {
  /** host[:port], without scheme. */
  host: string;
  caPem?: string;
  insecure: boolean;
}

export interface RuntimesOptions {
  /** <agent data dir>/virtualclusters */
  dir: string;
  /** The `virtualcluster` program's entry script. */
  program: string;
  /** The agent's host kubeconfig (its ServiceAccount): each runtime's kubeconfig is this one acting as the runtime. */
  hostKubeconfig: string;
  /** As the agent's own identity: namespaces and RoleBindings. */
  http: KubeHttp;
  platform(): PlatformEndpoint | undefined;
  /** Set: each runtime runs in a container of this image (podman), not as a child process. */
  container?: RuntimeContainer;
  logger?: Logger;
}

interface Placement extends Omit<VirtualClusterRequest, "accessKey"> {
  uid: string;
}

interface Supervised {
  placement: Placement;
  child?: ChildProcess;
  stopped: boolean;
  restartMs: number;
  timer?: NodeJS.Timeout;
}

const notFound = (error: unknown) => error instanceof KubeApiError && error.code === 404;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Runtimes {
  readonly #options: RuntimesOptions;
  readonly #supervised = new Map<string, Supervised>();

  constructor(options: RuntimesOptions) {
    this.#options = options;
  }

  #paths(uid: string) {
    const dir = join(this.#options.dir, uid);
    return {
      dir,
      placement: join(dir, "placement.json"),
      key: join(dir, "access-key"),
      kubeconfig: join(dir, "host.kubeconfig"),
      settings: join(dir, "virtualcluster.yaml"),
      data: join(dir, "data"),
      log: join(dir, "runtime.log"),
      pid: join(dir, "runtime.pid"),
    };
  }

  /** Starts again the runtimes a previous agent process ran (stopping any it left behind). */
  async load(): Promise<void> {
    await mkdir(this.#options.dir, { recursive: true, mode: 0o700 });
    for (const uid of await readdir(this.#options.dir)) {
      const paths = this.#paths(uid);
      if (!existsSync(paths.placement) || !existsSync(paths.key)) continue;
      await this.#stopLeftover(paths.pid, paths.data);
      const placement = JSON.parse(await readFile(paths.placement, "utf8")) as Placement;
      this.#supervise(placement);
    }
  }

  /** `<project>/<name>` of every virtual cluster run here. */
  names(): string[] {
    return [...this.#supervised.values()].map((s) => `${s.placement.project}/${s.placement.name}`).sort();
  }

  /** Whether the virtual cluster of this instance uid is run here. */
  has(uid: string): boolean {
    return this.#supervised.has(uid);
  }

  /** The virtual cluster's admin kubeconfig (apps are installed with it), once its API server runs. */
  adminKubeconfig(uid: string): string | undefined {
    if (!this.#supervised.has(uid)) return undefined;
    const data = this.#paths(uid).data;
    return readRuntimeStatus(data)?.url ? join(data, CLUSTER_ADMIN_KUBECONFIG) : undefined;
  }

  /** The virtual clusters running here as their metrics Prometheus scrapes them: API, CA and admin token files. */
  scrapeTargets(): { uid: string; project: string; name: string; url: string; caFile: string; tokenFile: string }[] {
    return [...this.#supervised.values()].flatMap(({ placement }) => {
      const data = this.#paths(placement.uid).data;
      const url = readRuntimeStatus(data)?.url;
      if (!url) return [];
      const { uid, project, name } = placement;
      return [
        { uid, project, name, url, caFile: join(data, "pki", "ca.crt"), tokenFile: join(data, ADMIN_TOKEN_FILE) },
      ];
    });
  }

  async put(uid: string, request: VirtualClusterRequest): Promise<WorkloadState> {
    const paths = this.#paths(uid);
    if (!request.accessKey && !existsSync(paths.key)) return { phase: "Pending", needsKey: true };
    const placement: Placement = {
      uid,
      project: request.project,
      name: request.name,
      instanceNamespace: request.instanceNamespace,
      hostNamespace: request.hostNamespace,
    };
    const owned = await this.#ensureNamespace(placement);
    if (owned) return owned;
    await this.#ensureBinding(placement);
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    if (request.accessKey) await writeFile(paths.key, `${request.accessKey}\n`, { mode: 0o600 });
    await writeFile(paths.placement, `${JSON.stringify(placement, null, 2)}\n`, { mode: 0o600 });
    await this.#writeKubeconfig(placement);
    const running = this.#supervised.get(uid);
    if (!running) this.#supervise(placement);
    else if (request.accessKey) running.child?.kill("SIGTERM"); // a new key: restart with it
    const status = readRuntimeStatus(paths.data);
    if (!status?.url) return { phase: "Pending", message: "the runtime is starting" };
    const problems = await this.#secrets(paths.data, request.secrets ?? []);
    return { phase: "Ready", message: [`running at ${status.url}`, ...problems].join("; ") };
  }

  /** The project secrets the virtual cluster receives, written through its own API as its admin. */
  async #secrets(data: string, secrets: DeliveredSecret[]): Promise<string[]> {
    let http: KubeHttp | undefined;
    try {
      http = new KubeHttp(await loadKubeAccess({ file: join(data, CLUSTER_ADMIN_KUBECONFIG) }), {
        userAgent: "virtualcluster-agent",
      });
      return await syncDeliveredSecrets(http, secrets, { createNamespaces: true });
    } catch (error) {
      // The virtual cluster runs either way; the log and the answer say why its secrets are not in place.
      const message = `project secrets not delivered: ${(error as Error).message}`;
      this.#options.logger?.warn({ data }, message);
      return [message];
    } finally {
      http?.close();
    }
  }

  async delete(uid: string): Promise<WorkloadState> {
    const supervised = this.#supervised.get(uid);
    const paths = this.#paths(uid);
    const placement =
      supervised?.placement ??
      (existsSync(paths.placement) ? (JSON.parse(await readFile(paths.placement, "utf8")) as Placement) : undefined);
    if (supervised) {
      this.#supervised.delete(uid);
      await this.#stop(supervised);
    }
    if (placement) {
      const namespace = await this.#namespace(placement.hostNamespace);
      if (namespace?.metadata.labels?.[RUNTIME_UID_LABEL] === uid) {
        if (!namespace.metadata.deletionTimestamp) {
          await this.#options.http
            .request({ method: "DELETE", path: `/api/v1/namespaces/${placement.hostNamespace}` })
            .catch((error: unknown) => {
              if (!notFound(error)) throw error;
            });
        }
        return { phase: "Pending", message: `namespace "${placement.hostNamespace}" is being deleted` };
      }
    }
    await rm(paths.dir, { recursive: true, force: true });
    return { phase: "Gone" };
  }

  /** Stops every runtime (the agent is stopping); they start again with the agent. */
  async close(): Promise<void> {
    const all = [...this.#supervised.values()];
    this.#supervised.clear();
    await Promise.all(all.map((supervised) => this.#stop(supervised)));
  }

  // ---- host ---------------------------------------------------------------------------------------------------

  async #namespace(name: string): Promise<KubeObject | undefined> {
    try {
      return await this.#options.http.request<KubeObject>({ method: "GET", path: `/api/v1/namespaces/${name}` });
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  /** Creates the namespace; a failure state when it exists and is not this instance's. */
  async #ensureNamespace(placement: Placement): Promise<WorkloadState | undefined> {
    const current = await this.#namespace(placement.hostNamespace);
    if (current) {
      if (current.metadata.labels?.[RUNTIME_UID_LABEL] !== placement.uid) {
        return {
          phase: "Failed",
          message: `namespace "${placement.hostNamespace}" already exists on the cluster and belongs to something else: set another spec.clusterRef.namespace`,
        };
      }
      if (current.metadata.deletionTimestamp) {
        return { phase: "Pending", message: `namespace "${placement.hostNamespace}" is still being deleted` };
      }
      return undefined;
    }
    await this.#options.http.request({
      method: "POST",
      path: "/api/v1/namespaces",
      body: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: placement.hostNamespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT, [RUNTIME_UID_LABEL]: placement.uid },
        },
      },
    });
    return undefined;
  }

  async #ensureBinding(placement: Placement): Promise<void> {
    const collection = `/apis/${RBAC_GROUP}/v1/namespaces/${placement.hostNamespace}/rolebindings`;
    const binding = {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "RoleBinding",
      metadata: { name: BINDING, namespace: placement.hostNamespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT } },
      roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: RUNTIME_ROLE },
      subjects: [{ apiGroup: RBAC_GROUP, kind: "User", name: runtimeUser(placement.hostNamespace, placement.name) }],
    };
    try {
      await this.#options.http.request({ method: "POST", path: collection, body: binding });
    } catch (error) {
      if (!(error instanceof KubeApiError) || error.code !== 409) throw error;
    }
  }

  /** The agent's kubeconfig, acting as the runtime's own identity. */
  async #writeKubeconfig(placement: Placement): Promise<void> {
    // The agent's kubeconfig is JSON (agentKubeconfig()).
    const config = JSON.parse(await readFile(this.#options.hostKubeconfig, "utf8")) as {
      users?: { user?: Record<string, unknown> }[];
    };
    for (const entry of config.users ?? []) {
      if (entry.user) entry.user.as = runtimeUser(placement.hostNamespace, placement.name);
    }
    await writeFile(this.#paths(placement.uid).kubeconfig, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  }

  // ---- processes ----------------------------------------------------------------------------------------------

  #supervise(placement: Placement): void {
    const supervised: Supervised = { placement, stopped: false, restartMs: FIRST_RESTART_MS };
    this.#supervised.set(placement.uid, supervised);
    void this.#start(supervised);
  }

  async #start(supervised: Supervised): Promise<void> {
    const platform = this.#options.platform();
    if (supervised.stopped) return;
    if (!platform) {
      // Not connected yet: try again shortly (the runtime needs to know where the platform is).
      supervised.timer = setTimeout(() => void this.#start(supervised), FIRST_RESTART_MS);
      return;
    }
    const { placement } = supervised;
    const paths = this.#paths(placement.uid);
    await writeFile(paths.settings, `external:\n  platform:\n    project: ${JSON.stringify(placement.project)}\n`, {
      mode: 0o600,
    });
    const accessKey = (await readFile(paths.key, "utf8")).trim();
    const variables: Record<string, string> = {
      LICENSE: accessKey,
      PLATFORM_HOST: platform.host,
      PLATFORM_PROJECT: placement.project,
      PLATFORM_INSECURE: platform.insecure ? "true" : "false",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    };
    if (platform.caPem) variables.PLATFORM_CA_DATA = platform.caPem;
    const launch = runtimeLaunch({
      name: placement.name,
      hostNamespace: placement.hostNamespace,
      files: paths,
      variables,
      program: this.#options.program,
      container: this.#options.container,
    });
    // Not inherited from the agent: a CA the runtime was not given.
    if (!platform.caPem) delete launch.env.PLATFORM_CA_DATA;
    const log = await open(paths.log, "a", 0o600);
    const child = spawn(launch.command, launch.args, { stdio: ["ignore", log.fd, log.fd], env: launch.env });
    await log.close();
    supervised.child = child;
    if (child.pid) await writeFile(paths.pid, `${child.pid}\n`, { mode: 0o600 });
    this.#options.logger?.info(
      { virtualCluster: `${placement.project}/${placement.name}`, pid: child.pid },
      this.#options.container ? "virtual cluster started in a container" : "virtual cluster started",
    );
    const started = Date.now();
    child.once("exit", (code, signal) => {
      supervised.child = undefined;
      if (supervised.stopped) return;
      // A runtime that ran a while earns a quick restart again.
      if (Date.now() - started > MAX_RESTART_MS) supervised.restartMs = FIRST_RESTART_MS;
      this.#options.logger?.warn(
        { virtualCluster: `${placement.project}/${placement.name}`, code, signal, restartInMs: supervised.restartMs },
        "virtual cluster exited; starting it again",
      );
      supervised.timer = setTimeout(() => void this.#start(supervised).catch(() => {}), supervised.restartMs);
      supervised.restartMs = Math.min(MAX_RESTART_MS, supervised.restartMs * 2);
    });
  }

  async #stop(supervised: Supervised): Promise<void> {
    supervised.stopped = true;
    clearTimeout(supervised.timer);
    const child = supervised.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // A `podman run` killed after the grace period leaves its container running: remove it by name.
    if (this.#options.container) {
      const name = agentRuntimeContainerName(this.#paths(supervised.placement.uid));
      await podman(["rm", "--force", "--ignore", name]).catch((error: unknown) => {
        this.#options.logger?.warn({ container: name, err: String(error) }, "removing a runtime's container failed");
      });
    }
  }

  /** A runtime an agent killed without warning left running: stop it (only if it is ours: its command names `data`). */
  async #stopLeftover(pidFile: string, data: string): Promise<void> {
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) return;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(data)) return;
    } catch {
      return;
    }
    process.kill(pid, "SIGTERM");
    while (alive(pid)) await sleep(100);
  }
}
