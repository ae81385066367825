// The audit log of an API server: follows the live settings (enable, level or policy, file, rotation and datastore
// change without a restart), decides once per request what to log, and holds each event to build its line together
// with others (HELD_EVENTS). Lines go in batches to the audit worker (audit-pipe.ts), which appends them to the
// rotating file and, on the platform, the searchable datastore; a virtual cluster also taps them to send to its
// platform. Runs inside the request hooks, so it never waits. It throws in one place: the request-body hook builds
// the event's request object before the registry runs, and throwing there refuses the request with 500. An event
// that still cannot be built is replaced by a minimal one (minimal-event.ts).

import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { AuditSettings } from "../config/settings.ts";
import type { AuditConfig, AuditLevel } from "../config/types.ts";
import { type AuditMetrics, createAuditMetrics } from "./audit-metrics.ts";
import { AuditPipe } from "./audit-pipe.ts";
import type { FromWorker, WorkerConfig } from "./audit-worker-protocol.ts";
import type { DatastoreReport } from "./datastore/audit-datastore.ts";
import type { AuditSearch, AuditSearchResult, StoredAuditEvent } from "./datastore/types.ts";
import { auditEventPieces, type LinePiece, prepareRequestObject, sameRequestInfo } from "./event.ts";
import { minimalEventLine } from "./minimal-event.ts";
import { auditPolicyOf, capCredentialRequests, compilePlatformPolicy } from "./platform-policy.ts";
import { type AuditDecision, type CompiledAuditPolicy, levelAtLeast } from "./policy.ts";
import type { RotationSettings } from "./rotating-file-sink.ts";
import type { AuditBodyRequest, AuditCompletion, AuditRequest, AuditRequestInfo, AuditStage } from "./types.ts";

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
/** Failure log lines are rate limited: the first, then one summary per interval. */
const FAILURE_LOG_INTERVAL_MS = 10_000;
const ANONYMOUS = { name: "system:anonymous", groups: ["system:unauthenticated"] };

/** Where the audit settings come from: the platform's LiveSettings, or a virtual cluster's fixed settings. */
export interface AuditSettingsSource {
  current(): { audit: AuditSettings };
  onChange(listener: (next: { audit: AuditSettings }) => void): () => void;
}

export interface AuditLoggerOptions {
  settings: AuditSettingsSource;
  logger?: Logger;
  /** Registry to add the audit metrics to (the API server's, so /metrics shows them). */
  metrics?: Registry;
  now?: () => Date;
  /**
   * The platform's data directory: events also go to the datastore (embedded there, or the configured
   * `dataStoreEndpoint`), which `search` reads. Unset: no datastore (a virtual cluster, tests of the file).
   */
  dataDir?: string;
  /** Sees every batch of event lines as it leaves the request path (a virtual cluster sends them to its platform). */
  tap?: (lines: readonly string[]) => void;
  /** Tuning of the datastore for tests (sweep interval, spool bound, retry delay). */
  datastoreTuning?: WorkerConfig["tuning"];
  /** The file the configured audit.path writes to (the platform: inside its audit directory); default: as given. */
  filePath?: (configured: string) => string;
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
  policy: CompiledAuditPolicy;
  /** The Tracked of each decision made under these settings. */
  tracked: Map<AuditDecision, Tracked>;
  /** No rule names users or groups: a decision depends on the request info alone (the level shorthand). */
  byInfoOnly: boolean;
  /** With byInfoOnly, the last decision and the request info it was made for (a client repeats its requests). */
  last: { info: AuditRequestInfo; tracked: Tracked } | undefined;
}

/**
 * Events are held and their lines built HELD_EVENTS at a time, or when the pipe hands a batch over (every 25 ms):
 * building a line right after a request's HTTP work runs the line code with cold caches, which cost several times
 * what the same code costs in a loop. Measured in the server (BENCHMARKS.md): about 5 µs per GET at Metadata, and
 * 512 at a time cost several µs per GET less than 64.
 */
const HELD_EVENTS = 512;
/**
 * A held event keeps its request (body and answer) alive until written: one with a body or pre-encoded answer
 * above this size is written at once, so held events keep at most HELD_EVENTS times this much (8 MiB) alive.
 */
const HELD_PAYLOAD_CHARS = 16 * 1024;

/** Held events, one index each: the stage's time is taken when it is logged, the line is built when written. */
interface HeldEvents {
  count: number;
  stages: AuditStage[];
  levels: AuditLevel[];
  requests: AuditRequest[];
  completions: (AuditCompletion | undefined)[];
  times: number[];
}

/** What a held slot refers to once written (so the request it held can be collected). */
const NO_REQUEST = {} as AuditRequest;

/**
 * What the logger keeps of a request in flight (in its slot): its policy decision under the settings it was made
 * with. One per decision and settings, shared by the requests that get it, so keeping it allocates nothing.
 */
class Tracked {
  /** The settings it was decided under: a change of them decides again. */
  readonly active: Active;
  readonly decision: AuditDecision;

  constructor(active: Active, decision: AuditDecision) {
    this.active = active;
    this.decision = decision;
  }
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
  private readonly pipe: AuditPipe;
  private active: Active | undefined;
  /** The pieces of the line being written (reused: a line is written before the next one is made). */
  private readonly pieces: LinePiece[] = [];
  /** Events logged and not yet written (see HELD_EVENTS). */
  private readonly held: HeldEvents = {
    count: 0,
    stages: [],
    levels: [],
    requests: [],
    completions: [],
    times: [],
  };
  private failures = { count: 0, lastLog: 0 };
  private datastoreFailures = { count: 0, lastLog: 0, failing: false };

  constructor(options: AuditLoggerOptions) {
    this.options = options;
    this.metrics = createAuditMetrics(options.metrics ?? new Registry());
    this.pipe = new AuditPipe({
      flush: () => this.flush(),
      onMessage: (message) => this.reported(message),
      onWorkerError: (error) =>
        options.logger?.error({ err: error.message }, "audit worker failed; restarting it (batched events lost)"),
      tap: options.tap,
    });
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

  /** Resolves when every event so far is on disk and in the datastore (or the datastore is failing). */
  async settled(): Promise<void> {
    await this.pipe.call({ method: "settle" });
  }

  /** Searches the datastore (the platform only). */
  search(query: AuditSearch): Promise<AuditSearchResult> {
    return this.pipe.call({ method: "search", query });
  }

  /** Every stored stage of one request (the platform only). */
  byAuditId(auditID: string): Promise<StoredAuditEvent[]> {
    return this.pipe.call({ method: "byAuditId", auditID });
  }

  /** Deletes expired events now (also done periodically). */
  async sweep(): Promise<void> {
    await this.pipe.call({ method: "sweep" });
  }

  /** Stores a virtual cluster's events (already redacted lines) in the datastore, tagged with its instance. */
  ingest(lines: string[], instance: string): void {
    this.pipe.forward(lines, instance);
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.active = undefined;
    await this.pipe.close();
  }

  private configure(settings: AuditSettings): void {
    this.flush(); // events logged under the old settings go where lines written before the change go
    const config = settings as AuditConfig;
    const on = config.enabled === true && Boolean(config.path);
    const wasOn = this.active !== undefined;
    const policy = auditPolicyOf(config);
    this.active = on
      ? {
          config,
          policy: compilePlatformPolicy(config),
          tracked: new Map(),
          byInfoOnly: !policy.rules?.some((rule) => rule.users?.length || rule.userGroups?.length),
          last: undefined,
        }
      : undefined;
    const dataDir = this.options.dataDir;
    this.pipe.configure({
      dataDir: dataDir ?? "",
      file: on
        ? { path: this.options.filePath?.(config.path!) ?? config.path!, rotation: rotationOf(config) }
        : undefined,
      // The datastore stays searchable while audit is off; it only receives no new events then.
      datastore: dataDir ? { endpoint: config.dataStoreEndpoint ?? "", ttlHours: config.dataStoreTTL } : undefined,
      tuning: this.options.datastoreTuning,
    });
    if (on && !wasOn) {
      this.options.logger?.info(
        { path: config.path, auditLevel: config.level, rules: config.policy?.rules?.length ?? 0 },
        "audit log enabled",
      );
    } else if (!on && wasOn) this.options.logger?.info("audit log disabled");
  }

  /** The request's decision, from its slot when a hook call of it made one under these settings. */
  private track(request: AuditRequest): Tracked | undefined {
    const active = this.active;
    if (!active) return undefined;
    const slot = request.slot;
    const kept = slot?.hookValue;
    if (kept instanceof Tracked && kept.active === active) return kept;
    const info = request.requestInfo;
    const last = active.last;
    if (last !== undefined && sameRequestInfo(last.info, info)) {
      if (slot) slot.hookValue = last.tracked;
      return last.tracked;
    }
    const attributes = { user: request.user ?? ANONYMOUS, info };
    const decision = capCredentialRequests(active.policy(attributes), attributes);
    let tracked = active.tracked.get(decision);
    if (tracked === undefined) {
      tracked = new Tracked(active, decision);
      active.tracked.set(decision, tracked); // a policy's decisions and their capped forms: a few
    }
    if (active.byInfoOnly) active.last = { info: { ...info }, tracked };
    if (slot) slot.hookValue = tracked;
    return tracked;
  }

  /** The request object of the ResponseComplete event, built now; undefined when the event will not have one. */
  private prepare(request: AuditBodyRequest): unknown {
    if (!request.requestObject) return undefined;
    const decision = this.track(request)?.decision;
    if (!decision || !levelAtLeast(decision.level, "Request") || decision.omitStages.has("ResponseComplete")) {
      return undefined;
    }
    this.options.testOnlyRequestObjectFault?.(request);
    return prepareRequestObject(request);
  }

  private log(stage: AuditStage, request: AuditRequest, completion: AuditCompletion | undefined): void {
    try {
      const tracked = this.track(request);
      if (!tracked || tracked.decision.level === "None" || tracked.decision.omitStages.has(stage)) return;
      const level = tracked.decision.level;
      const held = this.held;
      const i = held.count++;
      held.stages[i] = stage;
      held.levels[i] = level;
      held.requests[i] = request;
      held.completions[i] = completion;
      held.times[i] = this.options.now?.().getTime() ?? Date.now();
      this.metrics.event(level);
      if (i === 0) this.pipe.schedule(); // the next handover writes them
      const large =
        completion !== undefined &&
        ((completion.requestBytes ?? 0) > HELD_PAYLOAD_CHARS ||
          (completion.responseJson?.length ?? 0) > HELD_PAYLOAD_CHARS);
      if (held.count >= HELD_EVENTS || large) this.flush();
    } catch (error) {
      this.options.logger?.error(
        { err: String(error), stage },
        "audit event could not be built; writing a minimal one",
      );
      try {
        this.flush(); // after the events logged before it
        this.pipe.write(minimalEventLine(stage, request, completion?.code, this.options.now?.() ?? new Date()));
      } catch {
        this.metrics.dropped(1);
      }
    }
  }

  /** Writes the held events into the pipe's batch, in the order they were logged. */
  private flush(): void {
    const held = this.held;
    const count = held.count;
    if (count === 0) return;
    // The pipe may hand a full batch over meanwhile, which flushes again: that one finds nothing held.
    held.count = 0;
    const pieces = this.pieces;
    for (let i = 0; i < count; i++) {
      const stage = held.stages[i];
      const request = held.requests[i];
      const completion = held.completions[i];
      const now = held.times[i];
      try {
        // The request object could not be built before (the request was refused): the stand-in says what it was.
        if (completion?.preparationFailed) {
          this.pipe.write(minimalEventLine(stage, request, completion.code, new Date(now)));
        } else {
          const n = auditEventPieces(pieces, stage, held.levels[i], request, completion, now);
          this.pipe.writePieces(pieces, n);
        }
      } catch (error) {
        this.options.logger?.error(
          { err: String(error), stage },
          "audit event could not be built; writing a minimal one",
        );
        try {
          this.pipe.write(minimalEventLine(stage, request, completion?.code, new Date(now)));
        } catch {
          this.metrics.dropped(1);
        }
      }
    }
    // Nothing of these requests stays referenced.
    pieces.fill("");
    held.requests.fill(NO_REQUEST, 0, count);
    held.completions.fill(undefined, 0, count);
  }

  private reported(message: Exclude<FromWorker, { type: "reply" | "buffer" }>): void {
    switch (message.type) {
      case "stats":
        this.metrics.queuedBytes(message.fileQueuedBytes);
        this.metrics.datastoreSpooled(message.datastoreSpooled);
        return;
      case "file":
        if (message.report.kind === "dropped") this.metrics.dropped(message.report.count, "log");
        else this.fileFailure(message.report.operation, message.report.message);
        return;
      case "datastore":
        this.datastoreReport(message.report);
    }
  }

  private fileFailure(operation: Parameters<AuditMetrics["failure"]>[0], message: string): void {
    this.metrics.failure(operation);
    this.failures.count++;
    const now = Date.now();
    if (now - this.failures.lastLog < FAILURE_LOG_INTERVAL_MS) return;
    this.options.logger?.error(
      { operation, err: message, failuresSinceLastReport: this.failures.count, path: this.active?.config.path },
      "audit log file failing; events are kept in memory and retried (and dropped past the queue limit)",
    );
    this.failures = { count: 0, lastLog: now };
  }

  private datastoreReport(report: DatastoreReport): void {
    const logger = this.options.logger;
    switch (report.kind) {
      case "written":
        this.metrics.datastoreWritten(report.count);
        return;
      case "swept":
        this.metrics.datastoreSwept(report.count);
        logger?.info({ events: report.count }, "expired audit events deleted from the datastore");
        return;
      case "dropped":
        this.metrics.dropped(report.count, "datastore");
        logger?.warn(
          { events: report.count, reason: report.reason },
          "audit events dropped from the datastore spool (the audit log file still has them)",
        );
        return;
      case "recovered":
        this.datastoreFailures.failing = false;
        logger?.info("audit datastore reachable again; spooled events are being written");
        return;
      case "sweep-failure":
      case "failure": {
        if (report.kind === "failure") this.metrics.datastoreFailure();
        const state = this.datastoreFailures;
        state.count++;
        state.failing = true;
        const now = Date.now();
        if (now - state.lastLog < FAILURE_LOG_INTERVAL_MS) return;
        logger?.error(
          { err: report.message, failuresSinceLastReport: state.count, during: report.kind },
          "audit datastore failing; events are spooled in memory and retried (the newest dropped past the bound)",
        );
        state.count = 0;
        state.lastLog = now;
      }
    }
  }
}
