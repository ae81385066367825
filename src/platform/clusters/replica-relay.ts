// A request for a cluster whose agent is connected to another replica is relayed there as it came (the other
// replica authenticates and authorizes the caller's own credentials again), over HTTPS verified against the CA that
// replica published with its tunnel. RELAYED_HEADER stops a second hop: a relayed request that finds no tunnel
// either is answered 503 where it lands.

import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { errors } from "../../apimachinery/errors.ts";
import type { TunnelRecord } from "./tunnel-directory.ts";

export const RELAYED_HEADER = "x-platform-relayed";
const PER_CONNECTION = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer"]);

/** Whether a request already came from another replica. */
export function wasRelayed(request: IncomingMessage): boolean {
  return request.headers[RELAYED_HEADER] !== undefined;
}

function relayedHeaders(request: IncomingMessage, host: string, upgrade: boolean): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && (upgrade || !PER_CONNECTION.has(name))) headers[name] = value;
  }
  headers.host = host;
  headers[RELAYED_HEADER] = "1";
  return headers;
}

const unreachable = (record: TunnelRecord, error: Error) =>
  errors.serviceUnavailable(
    `the replica holding the cluster's agent (${record.replica}) cannot be reached: ${error.message}`,
  );

/** Relays to other replicas over kept-alive connections, one pool per replica. */
export class ReplicaRelay {
  readonly #agents = new Map<string, Agent>();

  #agentFor(record: TunnelRecord): Agent {
    const key = `${record.replica}\n${record.caPem ?? ""}`;
    let agent = this.#agents.get(key);
    if (!agent) {
      agent = new Agent({ keepAlive: true, ca: record.caPem });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  request(record: TunnelRecord, request: IncomingMessage, response: ServerResponse): Promise<number> {
    return relayRequest(record, request, response, this.#agentFor(record));
  }

  upgrade(record: TunnelRecord, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<number> {
    return relayUpgrade(record, request, socket, head);
  }

  /** Closes the kept-alive connections to other replicas (shutdown). */
  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

function relayRequest(
  record: TunnelRecord,
  request: IncomingMessage,
  response: ServerResponse,
  agent: Agent,
): Promise<number> {
  const target = new URL(request.url ?? "/", record.replica);
  return new Promise((resolve, reject) => {
    const out = httpsRequest(
      target,
      { method: request.method, headers: relayedHeaders(request, target.host, false), agent },
      (answer) => {
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !PER_CONNECTION.has(name)) headers[name] = value;
        }
        response.writeHead(answer.statusCode ?? 502, headers);
        if (answer.headers["content-length"] === undefined) response.flushHeaders();
        answer.pipe(response);
        answer.once("end", () => resolve(answer.statusCode ?? 502));
      },
    );
    out.once("error", (error) => {
      if (response.headersSent) response.destroy();
      else reject(unreachable(record, error));
    });
    response.once("close", () => {
      out.destroy();
      resolve(response.statusCode);
    });
    request.pipe(out);
  });
}

function relayUpgrade(record: TunnelRecord, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<number> {
  const target = new URL(request.url ?? "/", record.replica);
  return new Promise((resolve, reject) => {
    const out = httpsRequest(target, {
      method: request.method,
      headers: relayedHeaders(request, target.host, true),
      ca: record.caPem,
      agent: false,
    });
    out.once("upgrade", (answer, upstream, upstreamHead) => {
      const lines = ["HTTP/1.1 101 Switching Protocols"];
      for (let i = 0; i < answer.rawHeaders.length; i += 2)
        lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (upstreamHead.length) socket.write(upstreamHead);
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
      upstream.once("close", () => socket.destroy());
      socket.once("close", () => {
        upstream.destroy();
        resolve(101);
      });
    });
    out.once("response", (answer) => {
      const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ""}`];
      for (let i = 0; i < answer.rawHeaders.length; i += 2)
        lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      answer.pipe(socket);
      answer.once("end", () => resolve(answer.statusCode ?? 502));
    });
    out.once("error", (error) => reject(unreachable(record, error)));
    out.end();
  });
}
