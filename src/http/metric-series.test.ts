import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { createApiMetrics } from "./metrics.ts";

const labels = { verb: "GET", group: "g", resource: "users", subresource: "" };

test("createApiMetrics() request() counts per code and fills cumulative latency buckets in Prometheus text", async () => {
  const metrics = createApiMetrics(new Registry());
  metrics.request(labels, 200, 0.004);
  metrics.request(labels, 200, 0.03);
  metrics.request(labels, 404, 100);
  metrics.request({ ...labels, verb: "WATCH" }, 200, undefined);
  const text = await metrics.registry.metrics();
  assert.match(text, /^# TYPE apiserver_request_total counter$/m);
  assert.match(text, /^apiserver_request_total\{verb="GET",group="g",resource="users",subresource="",code="200"\} 2$/m);
  assert.match(text, /^apiserver_request_total\{verb="GET",group="g",resource="users",subresource="",code="404"\} 1$/m);
  assert.match(
    text,
    /^apiserver_request_total\{verb="WATCH",group="g",resource="users",subresource="",code="200"\} 1$/m,
  );
  assert.match(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  const series = 'verb="GET",group="g",resource="users",subresource=""';
  assert.ok(text.includes(`apiserver_request_duration_seconds_bucket{${series},le="0.005"} 1\n`));
  assert.ok(text.includes(`apiserver_request_duration_seconds_bucket{${series},le="0.05"} 2\n`));
  assert.ok(text.includes(`apiserver_request_duration_seconds_bucket{${series},le="60"} 2\n`));
  assert.ok(text.includes(`apiserver_request_duration_seconds_bucket{${series},le="+Inf"} 3\n`));
  assert.ok(text.includes(`apiserver_request_duration_seconds_count{${series}} 3\n`));
  assert.match(text, new RegExp(`^apiserver_request_duration_seconds_sum\\{${series}\\} 100\\.034`, "m"));
  assert.ok(
    !text.includes('verb="WATCH",group="g",resource="users",subresource="",le='),
    "watch durations are not observed",
  );
});

test("createApiMetrics() storageOperation() counts successes and errors with their latency", async () => {
  const metrics = createApiMetrics(new Registry());
  metrics.storageOperation("get", "users", true, 0.0001);
  metrics.storageOperation("get", "users", false, 0.002);
  metrics.storageOperation("list", "users", true, 0.0001);
  const text = await metrics.registry.metrics();
  assert.ok(!text.includes('operation="list",resource="users",result="error"'), "no series before its first use");
  assert.match(text, /^apiserver_storage_operations_total\{operation="get",resource="users",result="success"\} 1$/m);
  assert.match(text, /^apiserver_storage_operations_total\{operation="get",resource="users",result="error"\} 1$/m);
  assert.match(text, /^apiserver_storage_operation_duration_seconds_count\{operation="get",resource="users"\} 2$/m);
});
