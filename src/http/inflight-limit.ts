// The in-flight limits of kube-apiserver (--max-requests-inflight, --max-mutating-requests-inflight): at most so many
// read-only (GET, HEAD) and mutating requests are served at once; one more is answered 429 "Too many requests" with
// Retry-After: 1, which client-go and kubectl wait out and retry. Watches (long-running) and the health probes are
// exempt, so an overloaded server still streams and still answers its probes. Unlike kube-apiserver,
// system:masters is not exempt: our own controllers never call over HTTP, so no loopback client needs a way round.
//
// A slot is taken after authentication (an anonymous flood cannot take them) and before authorization, as upstream,
// and given back when the answer is complete. Counting is two integer updates per request.

import { errors } from "../apimachinery/errors.ts";
import type { ApiMetrics, RequestKind } from "./metrics.ts";
import type { RequestState } from "./request-state.ts";

export interface InflightLimitOptions {
  /** Read-only requests at once; 0: no limit. */
  maxReadOnly: number;
  /** Mutating requests at once; 0: no limit. */
  maxMutating: number;
  /** Keeps the counts (metrics.inflight) and counts refusals. */
  metrics: ApiMetrics;
}

export interface InflightLimit {
  /** Takes a slot for the request (unless exempt), recorded in state.inflight; throws 429 when none is free. */
  acquire(state: RequestState): void;
  /** Gives back the request's slot, if it holds one; safe to call more than once. */
  release(state: RequestState): void;
}

const RETRY_AFTER_SECONDS = 1;
const HEALTH_PATHS = ["/healthz", "/livez", "/readyz"];

/** Long-running requests and health probes hold no slot. */
function exempt(state: RequestState): boolean {
  const info = state.info!;
  if (info.resourceRequest) return info.verb === "watch";
  return HEALTH_PATHS.some((path) => info.path === path || info.path.startsWith(`${path}/`));
}

export function createInflightLimit(options: InflightLimitOptions): InflightLimit {
  const { metrics } = options;
  const counts = metrics.inflight;
  const max = { readOnly: options.maxReadOnly || Infinity, mutating: options.maxMutating || Infinity };
  return {
    acquire(state) {
      if (exempt(state)) return;
      const method = state.raw.method;
      const kind: RequestKind = method === "GET" || method === "HEAD" ? "readOnly" : "mutating";
      if (counts[kind] >= max[kind]) {
        metrics.requestDropped(kind);
        // A body nobody reads would keep the connection until it has all arrived.
        const headers = state.raw.headers;
        if (headers["transfer-encoding"] !== undefined || (headers["content-length"] ?? "0") !== "0") {
          state.closeConnection = true;
        }
        throw errors.tooManyRequests("Too many requests, please try again later.", RETRY_AFTER_SECONDS);
      }
      counts[kind]++;
      state.inflight = kind;
    },
    release(state) {
      const kind = state.inflight;
      if (kind === undefined) return;
      state.inflight = undefined;
      counts[kind]--;
    },
  };
}
