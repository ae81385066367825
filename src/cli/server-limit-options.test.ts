import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command } from "commander";
import { addServerLimitOptions, type ServerLimitFlags, serverLimitsFromFlags } from "./server-limit-options.ts";

function parse(args: string[]): ServerLimitFlags {
  const command = addServerLimitOptions(new Command("serve").exitOverride().configureOutput({ writeErr: () => {} }));
  command.parse(args, { from: "user" });
  return command.opts<ServerLimitFlags>();
}

describe("addServerLimitOptions()", () => {
  it("addServerLimitOptions() reads the four limits, 0 meaning no limit, and leaves unset ones to the defaults", () => {
    assert.deepEqual(
      serverLimitsFromFlags(
        parse([
          "--max-requests-inflight",
          "7",
          "--max-mutating-requests-inflight",
          "0",
          "--max-connections",
          "100",
          "--max-connections-per-client",
          "10",
        ]),
      ),
      { maxRequestsInflight: 7, maxMutatingRequestsInflight: 0, maxConnections: 100, maxConnectionsPerClient: 10 },
    );
    assert.deepEqual(serverLimitsFromFlags(parse([])), {
      maxRequestsInflight: undefined,
      maxMutatingRequestsInflight: undefined,
      maxConnections: undefined,
      maxConnectionsPerClient: undefined,
    });
  });

  it("addServerLimitOptions() refuses a value that is no whole number of 0 or more", () => {
    for (const flag of ["--max-requests-inflight", "--max-connections", "--max-connections-per-client"]) {
      for (const value of ["-1", "1.5", "x", ""]) {
        assert.throws(() => parse([flag, value]), /must be a whole number \(0 or more; 0: no limit\)/);
      }
    }
  });
});
