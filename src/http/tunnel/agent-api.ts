// What the platform asks of a cluster's agent over the tunnel (AGENT_API_PREFIX), as JSON in and out, and the one
// client the platform calls it with. The agent answers each request by making the host match it (idempotent: the
// platform repeats a request after a reconnect or on a resync without harm) and says where things stand.
//
//   GET    /agent/v1/info                     AgentInfo
//   PUT    /agent/v1/spaces/<namespace>       SpaceRequest -> WorkloadState (409: the namespace is not this space's)
//   DELETE /agent/v1/spaces/<namespace>?uid=  -> WorkloadState (gone once the host confirms the namespace is gone)
//   PUT    /agent/v1/virtualclusters/<uid>    VirtualClusterRequest -> WorkloadState (needsKey: send one)
//   DELETE /agent/v1/virtualclusters/<uid>    -> WorkloadState (gone once the runtime and its namespace are)
//   PUT    /agent/v1/helmreleases/<uid>       HelmReleaseRequest -> HelmReleaseState (wantsChart: send the archive)
//   DELETE /agent/v1/helmreleases/<uid>       HelmReleaseTarget -> HelmReleaseState (gone once uninstalled)
//   PUT    /agent/v1/metrics                  ClusterMetricsSettings -> ClusterMetricsState (cost control is on)
//   DELETE /agent/v1/metrics                  -> ClusterMetricsState (off: the agent's Prometheus stops)
//   GET    /agent/v1/metrics/federate?match[]= -> { text } (its Prometheus's /federate, for the platform's)

import { type ClientHttp2Session, constants } from "node:http2";
import { AGENT_API_PREFIX } from "./tunnel-protocol.ts";

export interface AgentInfo {
  kubernetesVersion?: string;
  agentVersion?: string;
  /** The direct endpoint for DirectClusterEndpointTokens, when the agent serves one. */
  directEndpoint?: { url: string; certificateAuthority: string };
  /** `<project>/<space>` of the spaces the agent keeps. */
  spaces: string[];
  /** `<project>/<name>` of the virtual clusters it runs. */
  virtualClusters: string[];
  /** The agent process's own usage (cost control): CPU seconds and requests since it started, resident memory. */
  usage?: { cpuSeconds: number; residentMemoryBytes: number; apiRequests: number };
  /** The `helm` the agent installs apps with (`helm version --short`); absent: it has none. */
  helmVersion?: string;
  /** The cluster's metrics Prometheus (cost control), as the agent runs it now. */
  metrics?: ClusterMetricsState;
}

/** A project member as a space grants it: User or Team, with the project role (view, edit, admin). */
export interface SpaceMember {
  kind: "User" | "Team";
  name: string;
  role: string;
}

/** A project secret as the platform delivers it (ProjectSecret spec.deliverTo): a Kubernetes Secret to keep. */
export interface DeliveredSecret {
  /** The ProjectSecret's name (the Secret is labelled with it). */
  projectSecret: string;
  /** The Secret's name, and its namespace (a virtual cluster's; a space's Secret goes into the space). */
  name: string;
  namespace?: string;
  /** Key to base64 value, as in a core/v1 Secret. */
  data: Record<string, string>;
}

export interface SpaceRequest {
  project: string;
  space: string;
  /** The SpaceInstance's uid: the namespace is labelled with it and never taken from another space. */
  uid: string;
  members: SpaceMember[];
  /** Project secrets the space receives; the agent removes those it made that are no longer listed. */
  secrets?: DeliveredSecret[];
}

export interface VirtualClusterRequest {
  project: string;
  /** The instance's name and namespace on the platform. */
  name: string;
  instanceNamespace: string;
  /** Its namespace on the host. */
  hostNamespace: string;
  /** The dedicated access key, sent only when the agent asked for one (needsKey). */
  accessKey?: string;
  /** Project secrets the virtual cluster receives, written through its own API once it runs. */
  secrets?: DeliveredSecret[];
}

export interface WorkloadState {
  /** Ready: in place (a runtime: started); Pending: on its way; Failed: see message; Gone: removed. */
  phase: "Ready" | "Pending" | "Failed" | "Gone";
  message?: string;
  /** Virtual clusters: the agent has no key for this one; send the request again with accessKey. */
  needsKey?: boolean;
}

/** The effective metrics settings of a cluster: its Cluster spec.costControl.metrics over the Config's defaults. */
export interface ClusterMetricsSettings {
  retention: string;
  /** A quantity ("10Gi"); empty: no size limit. */
  storageSize: string;
  scrapeInterval: string;
  /** resources.limits and requests (quantities as written; absent or empty: none), as PrometheusRunOptions. */
  memoryLimit?: string;
  cpuLimit?: string;
  memoryRequest?: string;
  cpuRequest?: string;
  /** "-" or "": a temporary TSDB deleted at stop; absent: <agent data dir>/prometheus/data. */
  storageClass?: string;
}

export interface ClusterMetricsState {
  /** Running: the agent's Prometheus scrapes it and its virtual clusters; Off; Failed: see message. */
  phase: "Running" | "Off" | "Failed";
  message?: string;
}

/** Where a release goes: a virtual cluster the agent runs (by its instance's uid), or a space's namespace. */
export type HelmReleaseTarget =
  | { virtualCluster: string; namespace: string; releaseName: string }
  | { space: string; releaseName: string };

/**
 * What the agent installs. The first request of a generation carries no chart: an agent that would install answers
 * `wantsChart` and the platform sends the request again with the archive it fetched itself (the repository's
 * credentials stay on the platform).
 */
export interface HelmReleaseRequest {
  target: HelmReleaseTarget;
  chart: string;
  /** The chart version the platform chose (with the archive). */
  version?: string;
  /** The chart archive (.tgz), base64. */
  archive?: string;
  /** YAML. */
  values?: string;
  /** Changes with the spec: the agent runs Helm again only for a new one (or after a failure). */
  generation: number;
}

export interface HelmReleaseState {
  /** Deployed: the generation is installed; Pending: Helm runs; Failed: see message; Gone: uninstalled. */
  phase: "Deployed" | "Pending" | "Failed" | "Gone";
  message?: string;
  revision?: number;
  chartVersion?: string;
  /** The generation the state is about. */
  generation?: number;
  /** When Helm last installed or upgraded it (RFC 3339). */
  appliedTime?: string;
  /** Pending: the agent would install this generation and needs the chart archive for it. */
  wantsChart?: boolean;
}

export interface AgentAnswer<T> {
  status: number;
  body: T;
}

const MAX_ANSWER_BYTES = 1024 * 1024;

/** One call of the agent's API; rejects when the tunnel fails or the whole answer has not come within `timeoutMs`. */
export function callAgent<T>(
  session: ClientHttp2Session,
  method: "GET" | "PUT" | "DELETE",
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<AgentAnswer<T>> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const stream = session.request(
      {
        ":method": method,
        ":path": `${AGENT_API_PREFIX}${path}`,
        ...(payload ? { "content-type": "application/json" } : {}),
      },
      { endStream: payload === undefined },
    );
    // A deadline from the start, not a timeout while idle: an agent that drips its answer a byte at a time (anyone who
    // owns a Cluster can run one) must not hold the call, and up to MAX_ANSWER_BYTES of it, for ever.
    const deadline = setTimeout(() => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(new Error(`the agent did not answer ${method} ${path} within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    deadline.unref();
    stream.once("close", () => clearTimeout(deadline));
    if (payload) stream.end(payload);
    let status = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) stream.close(constants.NGHTTP2_CANCEL);
      else chunks.push(chunk);
    });
    stream.on("end", () => {
      try {
        resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as T });
      } catch {
        reject(new Error(`the agent answered ${method} ${path} with ${status} and no JSON`));
      }
    });
    stream.on("error", reject);
  });
}
