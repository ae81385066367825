import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type HealthCheck, runHealthChecks } from "./health.ts";

const checks = (failing = false) =>
  new Map<string, HealthCheck>([
    ["ping", () => {}],
    [
      "storage",
      async () => {
        if (failing) throw new Error("disk gone: /secret/path");
      },
    ],
  ]);

describe("runHealthChecks()", () => {
  it("runHealthChecks() answers ok, or lists checks with ?verbose", async () => {
    assert.deepEqual(await runHealthChecks(checks(), { endpoint: "readyz", check: "", verbose: false, exclude: [] }), {
      code: 200,
      body: "ok",
    });
    assert.deepEqual(await runHealthChecks(checks(), { endpoint: "readyz", check: "", verbose: true, exclude: [] }), {
      code: 200,
      body: "[+]ping ok\n[+]storage ok\nreadyz check passed\n",
    });
  });

  it("runHealthChecks() answers 500 with the failing check and withholds the reason", async () => {
    const result = await runHealthChecks(checks(true), { endpoint: "healthz", check: "", verbose: false, exclude: [] });
    assert.equal(result.code, 500);
    assert.equal(result.body, "[+]ping ok\n[-]storage failed: reason withheld\nhealthz check failed\n");
  });

  it("runHealthChecks() serves single checks and exclusions", async () => {
    assert.equal(
      (await runHealthChecks(checks(true), { endpoint: "readyz", check: "ping", verbose: false, exclude: [] })).body,
      "ok",
    );
    assert.equal(
      (await runHealthChecks(checks(true), { endpoint: "readyz", check: "storage", verbose: false, exclude: [] })).code,
      500,
    );
    assert.equal(
      (await runHealthChecks(checks(), { endpoint: "readyz", check: "nope", verbose: false, exclude: [] })).code,
      404,
    );
    const excluded = await runHealthChecks(checks(true), {
      endpoint: "readyz",
      check: "",
      verbose: true,
      exclude: ["storage"],
    });
    assert.equal(excluded.code, 200);
    assert.match(excluded.body, /\[\+\]storage excluded: ok/);
  });

  it("runHealthChecks() passes a check that returns a warning, and reports the warning", async () => {
    const warned = new Map<string, HealthCheck>([
      ["ping", () => {}],
      ["disk", () => "12 MiB free"],
    ]);
    const plain = await runHealthChecks(warned, { endpoint: "readyz", check: "", verbose: false, exclude: [] });
    assert.deepEqual(plain, { code: 200, body: "ok", warnings: ["12 MiB free"] });
    const verbose = await runHealthChecks(warned, { endpoint: "readyz", check: "", verbose: true, exclude: [] });
    assert.equal(verbose.body, "[+]ping ok\n[+]disk ok (warning: 12 MiB free)\nreadyz check passed\n");
    const single = await runHealthChecks(warned, { endpoint: "readyz", check: "disk", verbose: false, exclude: [] });
    assert.deepEqual(single, { code: 200, body: "ok", warnings: ["12 MiB free"] });
  });
});
