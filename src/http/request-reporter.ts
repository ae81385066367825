// What the server reports about each request: the audit hooks (RequestReceived, ResponseStarted for watches,
// ResponseComplete) and the request metrics, the last step of the pipeline. Hooks never break a request: a hook
// that throws is logged.

import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { completedRequest, receivedRequest } from "./audit-records.ts";
import { errorSummary } from "./error-log.ts";
import { metricLabels } from "./metric-labels.ts";
import type { ApiMetrics } from "./metrics.ts";
import type { RequestState } from "./request-state.ts";
import type { ApiServerHooks } from "./types.ts";

export interface RequestReporter {
  /** An audit ID for a request arriving now, or "" when no hook listens to it (then no hook hears of it). */
  auditId(): string;
  /** Audit: RequestReceived (after authentication). */
  received(state: RequestState): void;
  /** Audit: ResponseStarted (a watch began streaming). */
  started(state: RequestState): void;
  /** Audit: ResponseComplete, then metrics. Watches report when their stream ends, without a duration. */
  completed(state: RequestState, code: number): void;
}

export function createRequestReporter(hooks: ApiServerHooks, metrics: ApiMetrics, logger?: Logger): RequestReporter {
  const listening = Boolean(hooks.onRequestReceived || hooks.onRequestComplete || hooks.onResponseStarted);
  const call = (what: string, hook: () => void) => {
    try {
      hook();
    } catch (error) {
      logger?.error({ err: errorSummary(error) }, `${what} hook failed`);
    }
  };
  return {
    auditId: () => (listening && (hooks.enabled?.() ?? true) ? randomUUID() : ""),
    received(state) {
      const hook = hooks.onRequestReceived;
      if (hook && state.id) call("request received", () => hook(receivedRequest(state)));
    },
    started(state) {
      const hook = hooks.onResponseStarted;
      if (hook && state.id) call("response started", () => hook(receivedRequest(state)));
    },
    completed(state, code) {
      const latencySeconds = (performance.now() - state.started) / 1000;
      const hook = hooks.onRequestComplete;
      if (hook && state.id && state.info)
        call("request completion", () => hook(completedRequest(state, code, latencySeconds)));
      const labels = metricLabels({
        method: state.raw.method ?? "",
        contentType: state.raw.headers["content-type"],
        info: state.info,
        definition: state.store?.definition,
      });
      metrics.request(labels, code, state.watching ? undefined : latencySeconds);
    },
  };
}
