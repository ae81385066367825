// What the server reports about each request: the audit hooks (RequestReceived, the request body before the
// registry, ResponseStarted for watches, ResponseComplete) and the request metrics, the last step of the pipeline.
// Hooks never break a request: a hook that throws is logged. The one exception is the request-body hook, which
// prepares the audit event's request object: when it cannot, the request is refused with 500 before anything is
// stored, since no write may go unaudited.

import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { errors } from "../apimachinery/errors.ts";
import { timeOrderedUuid } from "../utils/time-ordered-uuid.ts";
import { bodyReadRequest, completedRequest, receivedRequest } from "./audit-records.ts";
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
  /**
   * Audit: the body was read and nothing is stored yet; the hook builds the request object now. Throws a 500
   * StatusError when it cannot, so the request is refused before the registry runs.
   */
  bodyRead(state: RequestState): void;
  /** Audit: ResponseStarted (a watch began streaming). */
  started(state: RequestState): void;
  /** Audit: ResponseComplete, then metrics. Watches report when their stream ends, without a duration. */
  completed(state: RequestState, code: number): void;
}

export function createRequestReporter(hooks: ApiServerHooks, metrics: ApiMetrics, logger?: Logger): RequestReporter {
  const listening = Boolean(hooks.onRequestReceived || hooks.onRequestComplete || hooks.onResponseStarted);
  const failed = (what: string, error: unknown) => logger?.error({ err: errorSummary(error) }, `${what} hook failed`);
  return {
    // Time-ordered, so the audit datastore indexes them at the end (src/utils/time-ordered-uuid.ts).
    auditId: () => (listening && (hooks.enabled?.() ?? true) ? timeOrderedUuid() : ""),
    received(state) {
      if (!hooks.onRequestReceived || !state.id) return;
      try {
        hooks.onRequestReceived(receivedRequest(state));
      } catch (error) {
        failed("request received", error);
      }
    },
    bodyRead(state) {
      if (!hooks.onRequestBody || !state.id || !state.info || !state.body?.length) return;
      try {
        state.auditPrepared = hooks.onRequestBody(bodyReadRequest(state));
      } catch (error) {
        failed("request body", error);
        state.auditPreparationFailed = true;
        throw errors.internal("the audit event of this request could not be built, so nothing was done");
      }
    },
    started(state) {
      if (!hooks.onResponseStarted || !state.id) return;
      try {
        hooks.onResponseStarted(receivedRequest(state));
      } catch (error) {
        failed("response started", error);
      }
    },
    completed(state, code) {
      const latencySeconds = (performance.now() - state.started) / 1000;
      if (hooks.onRequestComplete && state.id && state.info) {
        try {
          hooks.onRequestComplete(completedRequest(state, code, latencySeconds));
        } catch (error) {
          failed("request completion", error);
        }
      }
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
