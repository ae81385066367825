import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { clusterPaths, ensureClusterDir } from "./local-clusters.ts";
import { freePort, isRuntimeProcess, lastLoggedProblem, readPid, runningPid, stopRuntime } from "./local-runtime.ts";

const root = mkdtempSync(join(tmpdir(), "vc-local-runtime-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("local runtime", () => {
  it("lastLoggedProblem() finds the last warning or error the new process logged, or its error line", () => {
    const paths = ensureClusterDir("ns", "a", root);
    const old = `${JSON.stringify({ level: 50, msg: "old failure" })}\n`;
    const fresh = [
      JSON.stringify({ level: 30, msg: "starting" }),
      JSON.stringify({ level: 50, msg: "platform connection failed", reason: "no platform access key found" }),
      JSON.stringify({ level: 30, msg: "still going" }),
      "",
    ].join("\n");
    writeFileSync(paths.log, old + fresh);
    assert.equal(lastLoggedProblem(paths, old.length), "platform connection failed: no platform access key found");
    writeFileSync(paths.log, `${old}error: listen EADDRINUSE: address already in use 127.0.0.1:1\n`);
    assert.equal(lastLoggedProblem(paths, old.length), "listen EADDRINUSE: address already in use 127.0.0.1:1");
    writeFileSync(paths.log, old);
    assert.equal(lastLoggedProblem(paths, old.length), undefined);
  });

  it("lastLoggedProblem() reads a container's log too (podman's k8s-file lines: time, stream, P or F)", () => {
    const paths = ensureClusterDir("ns", "d", root);
    const line = (entry: object) => `2026-11-29T00:05:56.957664163+00:00 stderr F ${JSON.stringify(entry)}`;
    writeFileSync(
      paths.log,
      [
        line({ level: 30, msg: "starting" }),
        line({ level: 40, msg: "platform connection failed", reason: "connection refused" }),
        "2026-11-29T00:05:57.000000000+00:00 stdout F Virtual cluster d listening on https://127.0.0.1:1",
        "",
      ].join("\n"),
    );
    assert.equal(lastLoggedProblem(paths, 0), "platform connection failed: connection refused");
  });

  it("freePort() returns a port that can be listened on", async () => {
    const port = await freePort("127.0.0.1");
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
    await new Promise((resolve) => server.close(resolve));
  });

  it("isRuntimeProcess() never takes another program for the runtime, and stopRuntime() leaves it alone", async () => {
    const paths = ensureClusterDir("ns", "b", root);
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(paths.pid, `${other.pid}\n`);
      assert.equal(readPid(paths), other.pid);
      assert.equal(isRuntimeProcess(other.pid!, paths), process.platform !== "linux");
      if (process.platform === "linux") {
        assert.equal(runningPid(paths), undefined);
        assert.equal(await stopRuntime(paths), false);
        assert.equal(other.exitCode, null, "not signalled");
      }
    } finally {
      other.kill();
    }
  });

  it("readPid() ignores a missing or garbled PID file", () => {
    const paths = clusterPaths("ns", "c", root);
    assert.equal(readPid(paths), undefined);
    ensureClusterDir("ns", "c", root);
    writeFileSync(paths.pid, "not a pid\n");
    assert.equal(readPid(paths), undefined);
  });
});
