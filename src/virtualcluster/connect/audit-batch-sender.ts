// POSTs a batch of audit events to `virtualclusterinstances/<name>/auditevents` on the platform with the
// connection's credentials.

import { KubeApiError } from "../kube/kube-api-error.ts";
import type { PlatformCredentials } from "./api-key-lookup.ts";
import { PLATFORM_GROUP, PLATFORM_VERSION, platformHttp } from "./platform-api.ts";

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
  // Batches are minutes apart: a connection of their own, closed after each.
  const http = platformHttp(credentials, { timeoutMs: TIMEOUT_MS, userAgent: "virtualcluster-audit" });
  try {
    await http.request({
      method: "POST",
      path: `/apis/${PLATFORM_GROUP}/${PLATFORM_VERSION}/namespaces/${encodeURIComponent(instance.namespace)}/virtualclusterinstances/${encodeURIComponent(instance.name)}/auditevents`,
      body: { apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`, kind: "AuditEventBatch", events },
    });
  } catch (error) {
    if (error instanceof KubeApiError) {
      const message = error.status?.message;
      throw new AuditBatchError(error.code, typeof message === "string" && message ? message : `HTTP ${error.code}`);
    }
    if ((error as { code?: unknown }).code === "ETIMEDOUT") {
      throw new Error(`no answer from the platform in ${TIMEOUT_MS / 1000} s`, { cause: error });
    }
    throw error;
  } finally {
    http.close();
  }
}
