// What the agent answers on its tunnel (tunnel-protocol.ts): PROXY_PREFIX streams go to the host as the platform
// user the platform names (impersonated); AGENT_API_PREFIX streams are the platform's requests of the agent itself
// (agent-api.ts). Only the platform can open streams on the tunnel (the agent dialled it, authenticated), so the
// identity headers it sends are trusted here — and nowhere else: the direct endpoint never reads them.

import type { IncomingHttpHeaders } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { Logger } from "pino";
import type {
  AgentInfo,
  ClusterMetricsSettings,
  HelmReleaseRequest,
  HelmReleaseTarget,
  SpaceRequest,
  VirtualClusterRequest,
  WorkloadState,
} from "../http/tunnel/agent-api.ts";
import {
  AGENT_API_PREFIX,
  GROUP_HEADER,
  PROXY_PREFIX,
  UPGRADE_HEADER,
  USER_HEADER,
} from "../http/tunnel/tunnel-protocol.ts";
import type { ClusterPrometheus } from "./cluster-prometheus.ts";
import type { HelmReleases } from "./helm-releases.ts";
import { type HostForwarder, streamSink } from "./host-forwarder.ts";
import type { Runtimes } from "./runtimes.ts";
import type { Spaces } from "./spaces.ts";

export interface AgentHandlers {
  info(): Promise<AgentInfo>;
  spaces: Spaces;
  runtimes: Runtimes;
  apps: HelmReleases;
  metrics: ClusterPrometheus;
  forwarder: HostForwarder;
  logger?: Logger;
}

const MAX_BODY_BYTES = 1024 * 1024;
/** A HelmRelease's request carries its chart archive (16 MiB at most, base64) with the values. */
const MAX_RELEASE_BODY_BYTES = 24 * 1024 * 1024;

function answer(stream: ServerHttp2Stream, status: number, body: unknown): void {
  if (stream.destroyed || stream.headersSent) return;
  const text = JSON.stringify(body);
  stream.respond({ ":status": status, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  stream.end(text);
}

function readJson<T>(stream: ServerHttp2Stream, maxBytes = MAX_BODY_BYTES): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) reject(new Error("request body too large"));
      else chunks.push(chunk);
    });
    stream.once("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T);
      } catch {
        reject(new Error("request body is not JSON"));
      }
    });
    stream.once("error", reject);
  });
}

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The platform's own requests: info, spaces, virtual clusters, apps, the cluster's metrics. */
async function agentApi(
  stream: ServerHttp2Stream,
  method: string,
  url: URL,
  handlers: AgentHandlers,
): Promise<{ status: number; body: unknown }> {
  const path = url.pathname.slice(AGENT_API_PREFIX.length);
  if (path === "/info" && method === "GET") return { status: 200, body: await handlers.info() };
  const space = /^\/spaces\/([a-z0-9][-a-z0-9]*)$/.exec(path);
  if (space && method === "PUT") {
    const state = await handlers.spaces.put(space[1], await readJson<SpaceRequest>(stream));
    return { status: 200, body: state };
  }
  if (space && method === "DELETE") {
    return { status: 200, body: await handlers.spaces.delete(space[1], url.searchParams.get("uid") ?? "") };
  }
  const cluster = /^\/virtualclusters\/([-a-zA-Z0-9]+)$/.exec(path);
  if (cluster && method === "PUT") {
    const state: WorkloadState = await handlers.runtimes.put(cluster[1], await readJson<VirtualClusterRequest>(stream));
    return { status: 200, body: state };
  }
  if (cluster && method === "DELETE") return { status: 200, body: await handlers.runtimes.delete(cluster[1]) };
  if (path === "/metrics" && method === "PUT") {
    return { status: 200, body: await handlers.metrics.put(await readJson<ClusterMetricsSettings>(stream)) };
  }
  if (path === "/metrics" && method === "DELETE") return { status: 200, body: await handlers.metrics.delete() };
  if (path === "/metrics/federate" && method === "GET") {
    return { status: 200, body: { text: await handlers.metrics.federate(url.searchParams.getAll("match[]")) } };
  }
  const release = /^\/helmreleases\/([-a-zA-Z0-9]+)$/.exec(path);
  if (release && method === "PUT") {
    const request = await readJson<HelmReleaseRequest>(stream, MAX_RELEASE_BODY_BYTES);
    return { status: 200, body: await handlers.apps.put(release[1], request) };
  }
  if (release && method === "DELETE") {
    return { status: 200, body: await handlers.apps.delete(release[1], await readJson<HelmReleaseTarget>(stream)) };
  }
  return { status: 404, body: { message: `no ${method} ${path} on the agent` } };
}

/** Answers one stream the platform opened on the tunnel. */
export function serveStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, handlers: AgentHandlers): void {
  stream.on("error", () => stream.destroy());
  const path = String(headers[":path"] ?? "/");
  const method = String(headers[":method"] ?? "GET");
  if (path.startsWith(`${PROXY_PREFIX}/`)) {
    const user = one(headers[USER_HEADER]);
    if (!user) {
      answer(stream, 400, { message: "a proxied request names the user to act as" });
      return;
    }
    const group = one(headers[GROUP_HEADER]);
    const groups = group ? group.split(/,\s*/).filter(Boolean) : [];
    handlers.forwarder
      .forward(
        {
          method,
          path: path.slice(PROXY_PREFIX.length),
          headers,
          identity: { user, groups },
          body: stream,
          hasBody: !stream.endAfterHeaders,
          upgrade: one(headers[UPGRADE_HEADER]),
        },
        streamSink(stream),
      )
      .catch((error: unknown) => {
        handlers.logger?.warn({ err: String(error) }, "forwarding a request to the host failed");
        answer(stream, 502, { message: "the agent could not forward the request" });
      });
    return;
  }
  if (path.startsWith(`${AGENT_API_PREFIX}/`)) {
    agentApi(stream, method, new URL(path, "http://agent"), handlers).then(
      ({ status, body }) => answer(stream, status, body),
      (error: unknown) => {
        handlers.logger?.warn(
          { request: `${method} ${path.split("?")[0]}`, err: String(error) },
          "agent request failed",
        );
        answer(stream, 500, { message: error instanceof Error ? error.message : String(error) });
      },
    );
    return;
  }
  answer(stream, 404, { message: "unknown path on the tunnel" });
}
