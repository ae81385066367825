// POSTs a batch of audit events to `virtualclusterinstances/<name>/auditevents` on the platform with the
// connection's credentials. client-node has no call for a POST to a custom resource's subresource, so this is a
// plain HTTPS request configured by the same kubeconfig the connection uses.

import { request } from "node:https";
import type { PlatformCredentials } from "./api-key-lookup.ts";
import { PLATFORM_GROUP, PLATFORM_VERSION, platformKubeConfig } from "./platform-api.ts";

const TIMEOUT_MS = 15_000;

/** A refused batch: `code` is the HTTP status, the message the platform's Status message. */
export class AuditBatchError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export async function sendAuditBatch(
  credentials: PlatformCredentials,
  instance: { namespace: string; name: string },
  events: unknown[],
): Promise<void> {
  const config = platformKubeConfig(credentials);
  const server = new URL(config.getCurrentCluster()?.server ?? "");
  const path = `${server.pathname.replace(/\/$/, "")}/apis/${PLATFORM_GROUP}/${PLATFORM_VERSION}/namespaces/${encodeURIComponent(instance.namespace)}/virtualclusterinstances/${encodeURIComponent(instance.name)}/auditevents`;
  const body = JSON.stringify({ apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`, kind: "AuditEventBatch", events });
  const options: Parameters<typeof request>[1] = {
    method: "POST",
    hostname: server.hostname.replace(/^\[|\]$/g, ""),
    port: server.port || 443,
    path,
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      accept: "application/json",
    },
    timeout: TIMEOUT_MS,
  };
  await config.applyToHTTPSOptions(options);
  await new Promise<void>((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) return resolve();
        let message = `HTTP ${code}`;
        try {
          const status = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { message?: unknown };
          if (typeof status.message === "string") message = status.message;
        } catch {
          // not a Status: the code says enough
        }
        reject(new AuditBatchError(code, message));
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer from the platform in ${TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
}
