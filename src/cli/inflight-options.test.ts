import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command } from "commander";
import { addInflightOptions, type InflightFlags, inflightLimits } from "./inflight-options.ts";

function parse(args: string[]): InflightFlags {
  const command = addInflightOptions(new Command("serve").exitOverride().configureOutput({ writeErr: () => {} }));
  command.parse(args, { from: "user" });
  return command.opts<InflightFlags>();
}

describe("addInflightOptions()", () => {
  it("addInflightOptions() reads both limits, 0 meaning no limit, and leaves unset ones to the defaults", () => {
    assert.deepEqual(inflightLimits(parse(["--max-requests-inflight", "7", "--max-mutating-requests-inflight", "0"])), {
      maxRequestsInflight: 7,
      maxMutatingRequestsInflight: 0,
    });
    assert.deepEqual(inflightLimits(parse([])), {
      maxRequestsInflight: undefined,
      maxMutatingRequestsInflight: undefined,
    });
  });

  it("addInflightOptions() refuses a value that is no whole number of 0 or more", () => {
    for (const value of ["-1", "1.5", "x", ""]) {
      assert.throws(
        () => parse(["--max-requests-inflight", value]),
        /must be a whole number \(0 or more; 0: no limit\)/,
      );
    }
  });
});
