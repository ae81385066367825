import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { anonymousRssBytes, insufficientResources, prometheusEnv } from "./prometheus-limits.ts";

describe("prometheusEnv()", () => {
  it("prometheusEnv() sets GOMEMLIMIT to 90% of limits.memory, in bytes", () => {
    assert.equal(prometheusEnv({ memoryLimit: "1Gi" }, {}).GOMEMLIMIT, String(Math.floor(2 ** 30 * 0.9)));
    assert.equal(prometheusEnv({ memoryLimit: "1000M" }, {}).GOMEMLIMIT, "900000000");
  });

  it("prometheusEnv() sets GOMAXPROCS to limits.cpu in whole cores, rounded up", () => {
    assert.equal(prometheusEnv({ cpuLimit: "500m" }, {}).GOMAXPROCS, "1");
    assert.equal(prometheusEnv({ cpuLimit: "2" }, {}).GOMAXPROCS, "2");
    assert.equal(prometheusEnv({ cpuLimit: "2.1" }, {}).GOMAXPROCS, "3");
    assert.equal(prometheusEnv({ cpuLimit: "1500m" }, {}).GOMAXPROCS, "2");
  });

  it("prometheusEnv() leaves the environment as it is without limits (requests change nothing)", () => {
    const base = { PATH: "/usr/bin", GOMAXPROCS: "4" };
    assert.deepEqual(prometheusEnv({ memoryRequest: "1Gi", cpuRequest: "1" }, base), base);
    assert.deepEqual(prometheusEnv({ memoryLimit: "", cpuLimit: "" }, base), base);
  });
});

describe("insufficientResources()", () => {
  const machine = { cores: 2, memoryBytes: 4 * 2 ** 30 };

  it("insufficientResources() refuses requests the machine cannot meet, naming each", () => {
    assert.match(
      insufficientResources({ cpuRequest: "3" }, machine) ?? "",
      /^Insufficient cpu \(requests 3, the machine has 2 cores\)/,
    );
    assert.match(
      insufficientResources({ cpuRequest: "4", memoryRequest: "8Gi" }, machine) ?? "",
      /Insufficient cpu .* and memory \(requests 8Gi/,
    );
  });

  it("insufficientResources() lets requests that fit (or none) through", () => {
    assert.equal(insufficientResources({ cpuRequest: "2", memoryRequest: "4Gi" }, machine), undefined);
    assert.equal(insufficientResources({}, machine), undefined);
  });
});

describe("anonymousRssBytes()", () => {
  it("anonymousRssBytes() reads a process's anonymous resident memory, and nothing once it is gone", async () => {
    // A child holding 64 MiB of written (so resident) anonymous memory, saying when it is ready.
    const child = spawn(
      process.execPath,
      [
        "-e",
        "const b = Buffer.alloc(64 * 2 ** 20, 1); process.stdout.write('ready'); setInterval(() => b[0]++, 1000);",
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    await new Promise((resolve) => child.stdout.once("data", resolve));
    const bytes = await anonymousRssBytes(child.pid ?? 0);
    assert.ok(bytes !== undefined && bytes >= 64 * 2 ** 20, String(bytes));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    assert.equal(await anonymousRssBytes(child.pid ?? 0), undefined);
  });
});
