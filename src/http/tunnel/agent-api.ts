// What the platform asks of a cluster's agent over the tunnel (AGENT_API_PREFIX), as JSON in and out, and the one
// client the platform calls it with. The agent answers each request by making the host match it (idempotent: the
// platform repeats a request after a reconnect or on a resync without harm) and says where things stand.
//
//   GET    /agent/v1/info                     AgentInfo
//   PUT    /agent/v1/spaces/<namespace>       SpaceRequest -> WorkloadState (409: the namespace is not this space's)
//   DELETE /agent/v1/spaces/<namespace>?uid=  -> WorkloadState (gone once the host confirms the namespace is gone)
//   PUT    /agent/v1/virtualclusters/<uid>    VirtualClusterRequest -> WorkloadState (needsKey: send one)
//   DELETE /agent/v1/virtualclusters/<uid>    -> WorkloadState (gone once the runtime and its namespace are)

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
}

/** A project member as a space grants it: User or Team, with the project role (view, edit, admin). */
export interface SpaceMember {
  kind: "User" | "Team";
  name: string;
  role: string;
}

export interface SpaceRequest {
  project: string;
  space: string;
  /** The SpaceInstance's uid: the namespace is labelled with it and never taken from another space. */
  uid: string;
  members: SpaceMember[];
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
}

export interface WorkloadState {
  /** Ready: in place (a runtime: started); Pending: on its way; Failed: see message; Gone: removed. */
  phase: "Ready" | "Pending" | "Failed" | "Gone";
  message?: string;
  /** Virtual clusters: the agent has no key for this one; send the request again with accessKey. */
  needsKey?: boolean;
}

export interface AgentAnswer<T> {
  status: number;
  body: T;
}

const MAX_ANSWER_BYTES = 1024 * 1024;

/** One call of the agent's API; rejects when the tunnel fails or no answer comes within `timeoutMs`. */
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
    stream.setTimeout(timeoutMs, () => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(new Error(`the agent did not answer ${method} ${path} within ${Math.round(timeoutMs / 1000)} s`));
    });
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
