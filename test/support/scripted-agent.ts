// An agent the test writes itself (an attacker's own, or a well-behaved one whose calls are counted): a real
// TunnelClient dials the platform with a Cluster's agent key, and each request the platform sends over the tunnel is
// answered 200 with what `answer` returns or resolves to (a string as it is, anything else as JSON) once its body has
// arrived.

import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import { TunnelClient } from "../../src/agent/tunnel-client.ts";
import { API, type AuthClient } from "./auth-client.ts";
import type { PlatformProcess } from "./platform-process.ts";

export interface ScriptedRequest {
  method: string;
  /** As the agent sees it, e.g. /agent/v1/info. */
  path: string;
  body: string;
}

export interface ScriptedAgentOptions {
  platform: PlatformProcess;
  cluster: string;
  accessKey: string;
  answer(request: ScriptedRequest): unknown;
  /** Its tunnel opened (again). */
  connected?(): void;
}

/** Dials at once; `close()` it after the test. */
export function startScriptedAgent(options: ScriptedAgentOptions): TunnelClient {
  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", async () => {
      const request = {
        method: String(headers[":method"]),
        path: String(headers[":path"]),
        body: Buffer.concat(chunks).toString("utf8"),
      };
      const answer = await options.answer(request);
      if (stream.destroyed) return;
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(typeof answer === "string" ? answer : JSON.stringify(answer));
    });
  };
  const agent = new TunnelClient({
    cluster: options.cluster,
    urls: [options.platform.url],
    caPem: options.platform.caPem,
    insecure: false,
    accessKey: options.accessKey,
    onStream,
    onConnected: () => options.connected?.(),
  });
  agent.start();
  return agent;
}

/** The agent key of `cluster`, minted by whoever `token` is (a Cluster's owner may). */
export async function mintAgentKey(client: AuthClient, token: string, cluster: string): Promise<string> {
  const minted = await client.send("POST", `/kubernetes/management${API}/clusters/${cluster}/accesskey`, {
    token,
    body: {},
  });
  assert.equal(minted.status, 201, minted.body);
  return minted.json().accessKey;
}
