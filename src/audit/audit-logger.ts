// The audit log of the API server: follows the live settings (enable, level or policy, file and rotation change
// without a restart), decides per request and stage what to log, and hands lines to the rotating file sink.
// Runs inside the request hooks, so it never waits: writing happens in the background. It throws in one place:
// the request-body hook builds the event's request object before the registry runs, and throwing there refuses
// the request with 500. An event that still cannot be built is replaced by a minimal one (minimal-event.ts).

import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { AuditSettings, LiveSettings } from "../config/settings.ts";
import type { AuditConfig, AuditLevel } from "../config/types.ts";
import { type AuditMetrics, createAuditMetrics } from "./audit-metrics.ts";
import { auditEventLine, prepareRequestObject } from "./event.ts";
import { minimalEventLine } from "./minimal-event.ts";
import { auditPolicyOf, capCredentialRequests } from "./platform-policy.ts";
import { type AuditAttributes, type AuditDecision, evaluateAuditPolicy, levelAtLeast } from "./policy.ts";
import { RotatingFileSink, type RotationSettings, type SinkOperation } from "./rotating-file-sink.ts";
import type { AuditBodyRequest, AuditCompletion, AuditRequest, AuditStage } from "./types.ts";

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
/** Failure log lines are rate limited: the first, then one summary per interval. */
const FAILURE_LOG_INTERVAL_MS = 10_000;
const ANONYMOUS = { name: "system:anonymous", groups: ["system:unauthenticated"] };

export interface AuditLoggerOptions {
  settings: LiveSettings;
  logger?: Logger;
  /** Registry to add the audit metrics to (the API server's, so /metrics shows them). */
  metrics?: Registry;
  now?: () => Date;
  /**
   * TEST-ONLY FAULT SEAM: called as the request object of an event is built, before the registry runs; throwing
   * stands for an event that cannot be built. No input can cause that once bodies are held to MAX_NESTING_DEPTH,
   * so the tests of the 500-before-store path use this. Never set outside tests.
   */
  testOnlyRequestObjectFault?: (request: AuditBodyRequest) => void;
}

export interface AuditHooks {
  /** Whether events are being logged now; the server skips the hooks for requests arriving while not. */
  enabled(): boolean;
  onRequestReceived(request: AuditRequest): void;
  /** The body was read: the request object of its ResponseComplete event, or undefined. Throws if it cannot. */
  onRequestBody(request: AuditBodyRequest): unknown;
  onResponseStarted(request: AuditRequest): void;
  onRequestComplete(completion: AuditCompletion): void;
}

interface Active {
  config: AuditConfig;
  policy: ReturnType<typeof auditPolicyOf>;
  sink: RotatingFileSink;
}

function rotationOf(config: AuditConfig): RotationSettings {
  return {
    maxSizeBytes: (config.maxSize || DEFAULT_MAX_SIZE_MB) * MEGABYTE,
    maxBackups: config.maxBackups ?? 0,
    maxAgeDays: config.maxAge ?? 0,
    compress: config.compress === true,
  };
}

export class AuditLogger {
  readonly hooks: AuditHooks;
  private readonly options: AuditLoggerOptions;
  private readonly metrics: AuditMetrics;
  private readonly unsubscribe: () => void;
  private active: Active | undefined;
  /** The previous sink's close, which a new sink of the same file waits for. */
  private closing: Promise<void> = Promise.resolve();
  private failures = { count: 0, lastLog: 0 };

  constructor(options: AuditLoggerOptions) {
    this.options = options;
    this.metrics = createAuditMetrics(options.metrics ?? new Registry());
    this.configure(options.settings.current().audit);
    this.unsubscribe = options.settings.onChange((next) => this.configure(next.audit));
    this.hooks = {
      enabled: () => this.enabled(),
      onRequestReceived: (request) => this.log("RequestReceived", request, undefined),
      onRequestBody: (request) => this.prepare(request),
      onResponseStarted: (request) => this.log("ResponseStarted", request, { ...request, code: 200 }),
      onRequestComplete: (completion) => this.log("ResponseComplete", completion, completion),
    };
  }

  /** Whether events are being logged now. */
  enabled(): boolean {
    return this.active !== undefined;
  }

  /** Resolves when every event so far is on disk and rotated files are compressed and pruned. */
  async settled(): Promise<void> {
    await this.closing;
    await this.active?.sink.settled();
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.stop();
    await this.closing;
  }

  private configure(settings: AuditSettings): void {
    const config = settings as AuditConfig;
    if (!config.enabled || !config.path) {
      this.stop();
      return;
    }
    const policy = auditPolicyOf(config);
    const current = this.active;
    if (current && current.sink.path === config.path) {
      current.sink.reconfigure(rotationOf(config));
      this.active = { config, policy, sink: current.sink };
      return;
    }
    this.stop();
    const sink = new RotatingFileSink({
      path: config.path,
      ...rotationOf(config),
      startAfter: this.closing,
      now: this.options.now,
      onFailure: (operation, error) => this.sinkFailure(operation, error),
      onDropped: (lines) => this.metrics.dropped(lines),
    });
    this.active = { config, policy, sink };
    this.options.logger?.info(
      { path: config.path, auditLevel: config.level, rules: policy.rules?.length ?? 0 },
      "audit log enabled",
    );
  }

  private stop(): void {
    const current = this.active;
    if (!current) return;
    this.active = undefined;
    const previous = this.closing;
    this.closing = previous.then(() => current.sink.close());
    this.options.logger?.info({ path: current.sink.path }, "audit log disabled");
  }

  private decide(request: AuditRequest): AuditDecision | undefined {
    const active = this.active;
    if (!active) return undefined;
    const attributes: AuditAttributes = { user: request.user ?? ANONYMOUS, info: request.requestInfo };
    return capCredentialRequests(evaluateAuditPolicy(active.policy, attributes), attributes);
  }

  /** The request object of the ResponseComplete event, built now; undefined when the event will not have one. */
  private prepare(request: AuditBodyRequest): unknown {
    if (!request.requestObject) return undefined;
    const decision = this.decide(request);
    if (!decision || !levelAtLeast(decision.level, "Request") || decision.omitStages.has("ResponseComplete")) {
      return undefined;
    }
    this.options.testOnlyRequestObjectFault?.(request);
    return prepareRequestObject(request);
  }

  private log(stage: AuditStage, request: AuditRequest, completion: AuditCompletion | undefined): void {
    try {
      const decision = this.decide(request);
      if (!decision || decision.level === "None" || decision.omitStages.has(stage)) return;
      const now = this.options.now?.() ?? new Date();
      // The request object could not be built before (the request was refused): the stand-in says what it was.
      if (completion?.preparationFailed) this.write(minimalEventLine(stage, request, completion.code, now), "Metadata");
      else this.write(auditEventLine(stage, decision.level, request, completion, now), decision.level);
    } catch (error) {
      this.options.logger?.error(
        { err: String(error), stage },
        "audit event could not be built; writing a minimal one",
      );
      try {
        this.write(minimalEventLine(stage, request, completion?.code, this.options.now?.() ?? new Date()), "Metadata");
      } catch {
        this.metrics.dropped(1);
      }
    }
  }

  private write(line: string, level: AuditLevel): void {
    const sink = this.active!.sink;
    if (sink.write(line)) this.metrics.event(level);
    this.metrics.queuedBytes(sink.queuedBytes());
  }

  private sinkFailure(operation: SinkOperation, error: Error): void {
    this.metrics.failure(operation);
    this.failures.count++;
    const now = Date.now();
    if (now - this.failures.lastLog < FAILURE_LOG_INTERVAL_MS) return;
    this.options.logger?.error(
      { operation, err: error.message, failuresSinceLastReport: this.failures.count, path: this.active?.sink.path },
      "audit log file failing; events are kept in memory and retried (and dropped past the queue limit)",
    );
    this.failures = { count: 0, lastLog: now };
  }
}
