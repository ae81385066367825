// The metrics of flow control and the connection caps (src/http/flow-control/), with kube-apiserver's names where
// one exists: apiserver_flowcontrol_* per priority level and flow schema, the in-flight gauges and drop counters
// the in-flight flags always had, and the connection counts. Gauges are read from the controllers when scraped;
// counters and the wait histogram are fed by the controller's observer.

import type { FlowSchema, PriorityLevel } from "./flow-control/classify.ts";
import { FLOW_SCHEMAS } from "./flow-control/classify.ts";
import type { ConnectionGate } from "./flow-control/connection-limit.ts";
import type { FlowControl, FlowObserver, FlowRejection, RequestKind } from "./flow-control/flow-control.ts";
import { type CounterSeries, type HistogramSeries, SeriesCounter, SeriesHistogram } from "./metric-series.ts";
import { Counter, Gauge, type Registry } from "./prometheus.ts";

const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const REASONS: readonly FlowRejection[] = ["queue-full", "time-out", "cancelled"];
const KINDS: readonly RequestKind[] = ["readOnly", "mutating"];

/** The observer that counts flow control's dispatches and rejections into `registry`. */
export function flowObserver(registry: Registry): FlowObserver {
  const dispatched = new SeriesCounter({
    name: "apiserver_flowcontrol_dispatched_requests_total",
    help: "Number of requests executed by API Priority and Fairness, by priority level and flow schema.",
    labelNames: ["priority_level", "flow_schema"],
    registry,
  });
  const rejected = new SeriesCounter({
    name: "apiserver_flowcontrol_rejected_requests_total",
    help: "Number of requests rejected by API Priority and Fairness, by priority level, flow schema and reason (queue-full, time-out, cancelled).",
    labelNames: ["priority_level", "flow_schema", "reason"],
    registry,
  });
  const waits = new SeriesHistogram({
    name: "apiserver_flowcontrol_request_wait_duration_seconds",
    help: "Time requests spent waiting in their queue before they were executed, by priority level and flow schema.",
    labelNames: ["priority_level", "flow_schema", "execute"],
    buckets: WAIT_BUCKETS,
    registry,
  });
  const dropped = new Counter({
    name: "apiserver_dropped_requests_total",
    help: "Number of requests refused with 429 by flow control (the in-flight flags' seats), by kind (readOnly, mutating).",
    labelNames: ["request_kind"],
    registers: [registry],
  });
  for (const kind of KINDS) dropped.labels(kind).inc(0);
  const answerTimeouts = new Counter({
    name: "apiserver_flowcontrol_answer_timeouts_total",
    help: "Number of connections closed because an answer was not written out to its client within 60 s, by priority level and flow schema.",
    labelNames: ["priority_level", "flow_schema"],
    registers: [registry],
  });
  const dispatchedSeries = new Map<string, { count: CounterSeries; wait: HistogramSeries }>();
  const rejectedSeries = new Map<string, CounterSeries>();
  for (const { schema, level } of FLOW_SCHEMAS) {
    dispatchedSeries.set(`${level} ${schema}`, {
      count: dispatched.labels(level, schema),
      wait: waits.labels(level, schema, "true"),
    });
    if (level === "exempt") continue;
    for (const reason of REASONS)
      rejectedSeries.set(`${level} ${schema} ${reason}`, rejected.labels(level, schema, reason));
  }
  return {
    dispatched(level: PriorityLevel, schema: FlowSchema, waitSeconds: number) {
      const series = dispatchedSeries.get(`${level} ${schema}`);
      series?.count.inc();
      series?.wait.observe(waitSeconds);
    },
    answerTimedOut(level: PriorityLevel, schema: FlowSchema) {
      answerTimeouts.inc({ priority_level: level, flow_schema: schema });
    },
    rejected(level: PriorityLevel, schema: FlowSchema, kind: RequestKind, reason: FlowRejection) {
      rejectedSeries.get(`${level} ${schema} ${reason}`)?.inc();
      if (reason !== "cancelled") dropped.labels(kind).inc();
    },
  };
}

/** The gauges read from flow control and the connection gate when scraped. */
export function registerFlowGauges(registry: Registry, flow: FlowControl, connections: ConnectionGate): void {
  const registers = [registry];
  const schemaOf = (level: PriorityLevel) => FLOW_SCHEMAS.find((entry) => entry.level === level)?.schema ?? "";
  new Gauge({
    name: "apiserver_current_inflight_requests",
    help: "Number of requests executing now by kind (readOnly, mutating), against the in-flight flags; exempt requests (watches, probes, admins) are not counted.",
    labelNames: ["request_kind"],
    registers,
    collect() {
      for (const kind of KINDS) this.set({ request_kind: kind }, flow.executingByKind[kind]);
    },
  });
  new Gauge({
    name: "apiserver_flowcontrol_nominal_limit_seats",
    help: "Seats of each priority level: its share of --max-requests-inflight plus --max-mutating-requests-inflight (-1: not limited).",
    labelNames: ["priority_level"],
    registers,
    collect() {
      this.set({ priority_level: "exempt" }, 0);
      for (const level of flow.levelStates()) {
        this.set({ priority_level: level.name }, Number.isFinite(level.seats) ? level.seats : -1);
      }
    },
  });
  new Gauge({
    name: "apiserver_flowcontrol_current_executing_requests",
    help: "Number of requests executing now, by priority level and flow schema (exempt ones not counted).",
    labelNames: ["priority_level", "flow_schema"],
    registers,
    collect() {
      for (const level of flow.levelStates()) {
        this.set({ priority_level: level.name, flow_schema: schemaOf(level.name) }, level.executing);
      }
    },
  });
  new Gauge({
    name: "apiserver_flowcontrol_current_inqueue_requests",
    help: "Number of requests waiting in their flow's queue now, by priority level and flow schema.",
    labelNames: ["priority_level", "flow_schema"],
    registers,
    collect() {
      for (const level of flow.levelStates()) {
        this.set({ priority_level: level.name, flow_schema: schemaOf(level.name) }, level.waiting);
      }
    },
  });
  new Gauge({
    name: "apiserver_flowcontrol_current_answer_bytes",
    help: "Bytes of answers to non-exempt requests being written out now (past 16 MiB for one flow, or 256 MiB in all, dispatching waits).",
    registers,
    collect() {
      this.set(flow.answerBytes());
    },
  });
  new Gauge({
    name: "apiserver_current_connections",
    help: "Number of open client connections, those on the reserve included.",
    registers,
    collect() {
      this.set(connections.counts.open);
    },
  });
  new Gauge({
    name: "apiserver_current_reserved_connections",
    help: "Number of open connections let in on the reserve above --max-connections (probes and admins only).",
    registers,
    collect() {
      this.set(connections.counts.onReserve);
    },
  });
  new Counter({
    name: "apiserver_rejected_connections_total",
    help: "Number of connections closed as they were accepted, by the cap they hit (max-connections, max-connections-per-client).",
    labelNames: ["reason"],
    registers,
    collect() {
      // The gate keeps the counts; a scrape copies them.
      this.reset();
      for (const [reason, count] of Object.entries(connections.counts.refused)) this.inc({ reason }, count);
    },
  });
  new Counter({
    name: "apiserver_closed_idle_connections_total",
    help: "Number of kept-alive idle connections closed to make room for a new one at a connection cap.",
    registers,
    collect() {
      this.reset();
      this.inc(connections.counts.closedIdle);
    },
  });
}
