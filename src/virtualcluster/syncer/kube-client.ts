import type { KubeAccess } from "../kube/kube-access.ts";
import { KubeApiError } from "../kube/kube-api-error.ts";
import { KubeHttp } from "../kube/kube-http.ts";

/** One API server's client: requests and watches share one keep-alive connection pool. */
export interface KubeClient {
  http: KubeHttp;
  /** Closes the pooled connections (watches included). */
  close(): Promise<void>;
}

export function createKubeClient(access: KubeAccess): KubeClient {
  const http = new KubeHttp(access, { userAgent: "virtualcluster-syncer" });
  return {
    http,
    async close() {
      http.close();
    },
  };
}

/** HTTP status of a failed API call; undefined for network errors. */
export function statusCode(error: unknown): number | undefined {
  return error instanceof KubeApiError ? error.code : undefined;
}

/** The Status `reason` of a failed API call (e.g. AlreadyExists, Conflict), when the server sent one. */
export function statusReason(error: unknown): string | undefined {
  if (!(error instanceof KubeApiError)) return undefined;
  const reason = error.status?.reason;
  return typeof reason === "string" ? reason : undefined;
}

/** One line describing a failed API call, without request bodies. */
export function describeError(error: unknown): string {
  if (error instanceof KubeApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
