import assert from "node:assert/strict";
import { test } from "node:test";
import { Counter, Gauge, Registry } from "./prometheus.ts";

test("prometheus.ts gives prom-client's own classes, which expose series as usual", async () => {
  const index = await import("prom-client");
  assert.equal(Registry, index.Registry);
  assert.equal(Counter, index.Counter);
  assert.equal(Gauge, index.Gauge);
  const registry = new Registry();
  new Counter({ name: "things_total", help: "Things.", registers: [registry] }).inc(3);
  new Gauge({ name: "depth", help: "Depth.", registers: [registry] }).set(2);
  const text = await registry.metrics();
  assert.match(text, /^things_total 3$/m);
  assert.match(text, /^depth 2$/m);
});
