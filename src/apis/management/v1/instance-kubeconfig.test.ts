import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  certificateLifetime,
  DEFAULT_CERTIFICATE_TTL_SECONDS,
  MAX_CERTIFICATE_TTL_SECONDS,
  SIGNING_DEFAULT_TTL_SECONDS,
} from "./instance-kubeconfig.ts";

describe("instance kubeconfig lifetimes", () => {
  it("certificateLifetime() gives one day when omitted, one year for 0 and the seconds asked otherwise", () => {
    assert.equal(certificateLifetime(undefined), DEFAULT_CERTIFICATE_TTL_SECONDS);
    assert.equal(DEFAULT_CERTIFICATE_TTL_SECONDS, 86_400);
    assert.equal(certificateLifetime(0), SIGNING_DEFAULT_TTL_SECONDS);
    assert.equal(SIGNING_DEFAULT_TTL_SECONDS, 31_536_000);
    assert.equal(certificateLifetime(1), 1);
    assert.equal(certificateLifetime(MAX_CERTIFICATE_TTL_SECONDS), MAX_CERTIFICATE_TTL_SECONDS);
  });

  it("certificateLifetime() refuses negative and over-long lifetimes with a field error", () => {
    assert.deepEqual(certificateLifetime(-1), {
      type: "FieldValueInvalid",
      field: "spec.certificateTTL",
      badValue: -1,
      detail: "must be 0 (the signing default of one year) or a positive number of seconds",
    });
    const long = certificateLifetime(MAX_CERTIFICATE_TTL_SECONDS + 1);
    assert.equal(typeof long, "object");
    assert.match((long as { detail: string }).detail, /must be at most 315360000 \(10 years\)/);
  });
});
