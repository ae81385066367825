import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import { parseDeleteOptions } from "./delete-options.ts";

const isCode = (code: number, message?: string) => (e: unknown) =>
  isStatusError(e) && e.code === code && (message === undefined || e.message === message);

describe("parseDeleteOptions()", () => {
  it("parseDeleteOptions() reads kubectl's DeleteOptions body", () => {
    assert.deepEqual(
      parseDeleteOptions(
        {
          kind: "DeleteOptions",
          apiVersion: "meta.k8s.io/v1",
          propagationPolicy: "Foreground",
          gracePeriodSeconds: 0,
          dryRun: ["All"],
          preconditions: { uid: "u1", resourceVersion: "5" },
        },
        { propagationPolicy: "Orphan" },
      ),
      {
        propagationPolicy: "Foreground",
        gracePeriodSeconds: 0,
        dryRun: true,
        preconditions: { uid: "u1", resourceVersion: "5" },
      },
    );
  });

  it("parseDeleteOptions() reads query parameters when the body is empty", () => {
    assert.deepEqual(
      parseDeleteOptions(undefined, { propagationPolicy: "Background", gracePeriodSeconds: "10", dryRun: "All" }),
      { propagationPolicy: "Background", gracePeriodSeconds: 10, dryRun: true },
    );
    assert.deepEqual(parseDeleteOptions(undefined, { orphanDependents: "false" }), { orphanDependents: false });
    assert.deepEqual(parseDeleteOptions(undefined, { "preconditions.uid": "u" }), { preconditions: { uid: "u" } });
  });

  it("parseDeleteOptions() answers 422 for orphanDependents with propagationPolicy", () => {
    assert.throws(
      () => parseDeleteOptions({ orphanDependents: true, propagationPolicy: "Orphan" }, {}),
      isCode(
        422,
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
      ),
    );
    assert.throws(() => parseDeleteOptions(undefined, { propagationPolicy: "Sideways" }), isCode(422));
    assert.throws(() => parseDeleteOptions({ dryRun: ["Some"] }, {}), isCode(422));
  });

  it("parseDeleteOptions() answers 400 for bodies of the wrong shape", () => {
    assert.throws(() => parseDeleteOptions([], {}), isCode(400));
    assert.throws(() => parseDeleteOptions({ kind: "User" }, {}), isCode(400));
    assert.throws(() => parseDeleteOptions({ gracePeriodSeconds: "ten" }, {}), isCode(400));
    assert.throws(() => parseDeleteOptions({ dryRun: "All" }, {}), isCode(400));
    assert.throws(() => parseDeleteOptions(undefined, { gracePeriodSeconds: "x" }), isCode(400));
  });
});
