// Prometheus metrics of one API server, in its own registry (several servers may share a process in tests).
// Names follow kube-apiserver where one exists. Label values are bounded: only served resources appear. Flow
// control's and the connection caps' metrics are in flow-metrics.ts.

import { type CounterSeries, type HistogramSeries, SeriesCounter, SeriesHistogram } from "./metric-series.ts";
import { Counter, Gauge, Registry } from "./prometheus.ts";

export interface RequestLabels {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
}

export interface ApiMetrics {
  readonly registry: Registry;
  /** A TLS handshake failed or timed out (apiserver_tls_handshake_errors_total). */
  tlsHandshakeError(): void;
  /** A connection was closed because a request's headers or body did not arrive in time. */
  requestReadTimeout(): void;
  /** One finished request (watches: when the stream ends; their duration is not observed, as upstream). */
  request(labels: RequestLabels, code: number, seconds: number | undefined): void;
  /** Open watch streams per resource (apiserver_longrunning_requests). */
  watchOpened(group: string, resource: string): void;
  watchClosed(group: string, resource: string): void;
  /** Hook for the registry/storage: one storage operation (get, list, create, update, delete, watch...). */
  storageOperation(operation: string, resource: string, ok: boolean, seconds?: number): void;
  /** Hook for the registry: number of stored objects of a resource. */
  storageObjects(resource: string, count: number): void;
}

/** The bound request series of one label set: its latency histogram and a counter per response code. */
interface RouteSeries {
  /** Created on the first observation (watches never observe one, and export no empty histogram). */
  duration?: HistogramSeries;
  byCode: Map<number, CounterSeries>;
}

const LATENCY_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 60,
];
const STORAGE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createApiMetrics(registry = new Registry()): ApiMetrics {
  const registers = [registry];
  // Per-request series (observed on every request) bind their labels once: see metric-series.ts.
  const requests = new SeriesCounter({
    name: "apiserver_request_total",
    help: "Counter of apiserver requests broken out for each verb, API group, resource and HTTP response code.",
    labelNames: ["verb", "group", "resource", "subresource", "code"],
    registry,
  });
  const durations = new SeriesHistogram({
    name: "apiserver_request_duration_seconds",
    help: "Response latency distribution in seconds for each verb, group, resource and subresource.",
    labelNames: ["verb", "group", "resource", "subresource"],
    buckets: LATENCY_BUCKETS,
    registry,
  });
  const longRunning = new Gauge({
    name: "apiserver_longrunning_requests",
    help: "Number of open long-running requests (watches) by verb, group and resource.",
    labelNames: ["verb", "group", "resource"],
    registers,
  });
  const storageOps = new SeriesCounter({
    name: "apiserver_storage_operations_total",
    help: "Storage operations by operation, resource and result.",
    labelNames: ["operation", "resource", "result"],
    registry,
  });
  const storageDurations = new SeriesHistogram({
    name: "apiserver_storage_operation_duration_seconds",
    help: "Storage operation latency in seconds by operation and resource.",
    labelNames: ["operation", "resource"],
    buckets: STORAGE_BUCKETS,
    registry,
  });
  const storageObjects = new Gauge({
    name: "apiserver_storage_objects",
    help: "Number of stored objects at the time of last check, by resource.",
    labelNames: ["resource"],
    registers,
  });
  const handshakeErrors = new Counter({
    name: "apiserver_tls_handshake_errors_total",
    help: "Number of TLS handshakes that failed or did not finish within the handshake timeout.",
    registers,
  });
  const readTimeouts = new Counter({
    name: "apiserver_request_read_timeouts_total",
    help: "Number of connections closed because a request's headers or body did not arrive within its timeout.",
    registers,
  });
  const routes = new Map<string, RouteSeries>();
  const route = (labels: RequestLabels): RouteSeries => {
    const { verb, group, resource, subresource } = labels;
    const id = `${verb} ${group} ${resource} ${subresource}`;
    let series = routes.get(id);
    if (!series) {
      series = { byCode: new Map() };
      routes.set(id, series);
    }
    return series;
  };
  // Series appear on first use, as prom-client's do.
  const storageSeries = new Map<string, { ok?: CounterSeries; failed?: CounterSeries; duration?: HistogramSeries }>();
  return {
    registry,
    tlsHandshakeError() {
      handshakeErrors.inc();
    },
    requestReadTimeout() {
      readTimeouts.inc();
    },
    request(labels, code, seconds) {
      const series = route(labels);
      let counter = series.byCode.get(code);
      if (!counter) {
        counter = requests.labels(labels.verb, labels.group, labels.resource, labels.subresource, String(code));
        series.byCode.set(code, counter);
      }
      counter.inc();
      if (seconds !== undefined) {
        series.duration ??= durations.labels(labels.verb, labels.group, labels.resource, labels.subresource);
        series.duration.observe(seconds);
      }
    },
    watchOpened(group, resource) {
      longRunning.inc({ verb: "WATCH", group, resource });
    },
    watchClosed(group, resource) {
      longRunning.dec({ verb: "WATCH", group, resource });
    },
    storageOperation(operation, resource, ok, seconds) {
      const id = `${operation} ${resource}`;
      let series = storageSeries.get(id);
      if (!series) {
        series = {};
        storageSeries.set(id, series);
      }
      if (ok) {
        series.ok ??= storageOps.labels(operation, resource, "success");
        series.ok.inc();
      } else {
        series.failed ??= storageOps.labels(operation, resource, "error");
        series.failed.inc();
      }
      if (seconds !== undefined) {
        series.duration ??= storageDurations.labels(operation, resource);
        series.duration.observe(seconds);
      }
    },
    storageObjects(resource, count) {
      storageObjects.set({ resource }, count);
    },
  };
}
