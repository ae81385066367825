// PrometheusProcess with Debian's prometheus (skipped, saying so, without it): the Config's resources and storage
// class reach the process as prometheus-limits.ts says.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { environOf, PROMETHEUS, prometheusSkip } from "../../test/support/prometheus.ts";
import { waitFor } from "../../test/support/wait-for.ts";
import { PrometheusProcess, type PrometheusRunOptions, ResourceLimitError } from "./prometheus-runner.ts";

const flags = async (url: string) =>
  ((await (await fetch(`${url}/api/v1/status/flags`)).json()) as { data: Record<string, string> }).data;

describe("PrometheusProcess with Debian's prometheus", { skip: prometheusSkip }, () => {
  let root: string;
  const options = (extra: Partial<PrometheusRunOptions>): PrometheusRunOptions => ({
    binary: PROMETHEUS,
    dir: join(root, "prometheus"),
    retention: "1d",
    retentionSize: "20Mi",
    scrapeInterval: "30s",
    targets: [],
    ...extra,
  });

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "prometheus-runner-"));
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("start() gives Prometheus GOMEMLIMIT and GOMAXPROCS from the limits, and the size as its retention size", async () => {
    const process = await PrometheusProcess.start(options({ memoryLimit: "2Gi", cpuLimit: "1500m" }));
    try {
      const env = await environOf(process.pid ?? 0);
      assert.equal(env.GOMEMLIMIT, String(Math.floor(2 * 2 ** 30 * 0.9)));
      assert.equal(env.GOMAXPROCS, "2");
      const set = await flags(process.url);
      assert.equal(set["storage.tsdb.retention.size"], "20MiB");
      assert.equal(set["storage.tsdb.path"], join(root, "prometheus", "data"), "unset storageClass: the data dir");
    } finally {
      await process.stop();
    }
    assert.ok(existsSync(join(root, "prometheus", "data")), "the data directory stays for the next start");
  });

  for (const storageClass of ["-", ""]) {
    it(`start() with storageClass ${JSON.stringify(storageClass)} keeps the TSDB in a temporary directory deleted at stop`, async () => {
      const process = await PrometheusProcess.start(options({ storageClass }));
      const path = (await flags(process.url))["storage.tsdb.path"];
      assert.equal(path, process.dataDir);
      assert.ok(path.startsWith(join(tmpdir(), "vcp-prometheus-")), path);
      assert.ok(existsSync(path));
      await process.stop();
      assert.equal(existsSync(path), false);
    });
  }

  it("start() refuses requests the machine cannot meet, as a pod that fits no node stays Pending", async () => {
    await assert.rejects(PrometheusProcess.start(options({ cpuRequest: "100000" })), (error: Error) => {
      assert.ok(error instanceof ResourceLimitError);
      assert.match(error.message, /^Insufficient cpu \(requests 100000/);
      return true;
    });
  });

  it("a Prometheus whose anonymous memory passes limits.memory is killed, and says so", async () => {
    // Prometheus needs tens of MiB: 8Mi is passed at once (before or after it is ready).
    let reason: string | undefined;
    try {
      const process = await PrometheusProcess.start(options({ memoryLimit: "8Mi" }));
      await waitFor(async () => !process.running, "the memory limit's kill");
      reason = process.exitReason;
    } catch (error) {
      reason = (error as Error).message;
    }
    assert.match(
      reason ?? "",
      /killed for exceeding its memory limit of 8388608 bytes \(anonymous resident memory \d+/,
    );
  });
});
