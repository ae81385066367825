import assert from "node:assert/strict";
import { test } from "node:test";
import { modulesLoadedBy } from "../utils/testing-module-graph.ts";

// What an idle, connected agent never needs stays out of its start (issue 34's agent RSS < 80 MB): one import of a
// constant from cluster-api-server.ts once brought the whole stand-alone API server (fastify, ajv, the store, the
// x509 library) into every agent, about 10 MiB resident.
test("startAgent()'s module loads neither the cluster API server nor YAML, Prometheus's runner or prom-client", () => {
  const loaded = modulesLoadedBy("./agent/agent.ts");
  assert.ok(loaded.some((url) => url.endsWith("/src/agent/tunnel-client.ts")));
  const unwanted = [
    "/src/cluster-apiserver/cluster-api-server.ts",
    "/src/metrics/prometheus-runner.ts",
    "/src/http/prometheus.ts",
    "/node_modules/yaml/",
    "/node_modules/prom-client/",
    "/node_modules/fastify/",
    "/node_modules/ajv/",
    "/node_modules/@peculiar/",
  ];
  assert.deepEqual(
    loaded.filter((url) => unwanted.some((part) => url.includes(part))),
    [],
  );
});
