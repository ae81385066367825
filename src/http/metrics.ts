// Prometheus metrics of one API server, in its own registry (several servers may share a process in tests).
// Names follow kube-apiserver where one exists. Label values are bounded: only served resources appear.

import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface RequestLabels {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
}

export interface ApiMetrics {
  readonly registry: Registry;
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

const LATENCY_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 60,
];
const STORAGE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createApiMetrics(registry = new Registry()): ApiMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: "apiserver_request_total",
    help: "Counter of apiserver requests broken out for each verb, API group, resource and HTTP response code.",
    labelNames: ["verb", "group", "resource", "subresource", "code"],
    registers,
  });
  const durations = new Histogram({
    name: "apiserver_request_duration_seconds",
    help: "Response latency distribution in seconds for each verb, group, resource and subresource.",
    labelNames: ["verb", "group", "resource", "subresource"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const longRunning = new Gauge({
    name: "apiserver_longrunning_requests",
    help: "Number of open long-running requests (watches) by verb, group and resource.",
    labelNames: ["verb", "group", "resource"],
    registers,
  });
  const storageOps = new Counter({
    name: "apiserver_storage_operations_total",
    help: "Storage operations by operation, resource and result.",
    labelNames: ["operation", "resource", "result"],
    registers,
  });
  const storageDurations = new Histogram({
    name: "apiserver_storage_operation_duration_seconds",
    help: "Storage operation latency in seconds by operation and resource.",
    labelNames: ["operation", "resource"],
    buckets: STORAGE_BUCKETS,
    registers,
  });
  const storageObjects = new Gauge({
    name: "apiserver_storage_objects",
    help: "Number of stored objects at the time of last check, by resource.",
    labelNames: ["resource"],
    registers,
  });
  return {
    registry,
    request(labels, code, seconds) {
      requests.inc({ ...labels, code: String(code) });
      if (seconds !== undefined) durations.observe(labels as unknown as Record<string, string>, seconds);
    },
    watchOpened(group, resource) {
      longRunning.inc({ verb: "WATCH", group, resource });
    },
    watchClosed(group, resource) {
      longRunning.dec({ verb: "WATCH", group, resource });
    },
    storageOperation(operation, resource, ok, seconds) {
      storageOps.inc({ operation, resource, result: ok ? "success" : "error" });
      if (seconds !== undefined) storageDurations.observe({ operation, resource }, seconds);
    },
    storageObjects(resource, count) {
      storageObjects.set({ resource }, count);
    },
  };
}
