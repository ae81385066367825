// 1. Baseline: a bare node:https server (bench/baseline-server.ts, own child process, pinned to the server CPU)
// answering GET with exactly the bytes of the platform's user GET response. Every other scenario's req/s is
// compared with this number from the same run.

import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchUser, USERS_PATH } from "../lib/api.ts";
import { warmThenLoad } from "../lib/load.ts";
import { SERVER_CPU, startBenchPlatform } from "../lib/platform.ts";
import { pinToCpu } from "../lib/proc.ts";
import { LOAD_COLUMNS, loadData, loadRow, type Scenario, serverMicrosPerRequest } from "../lib/scenario.ts";

export const GET_CONNECTIONS = 32;
export const GET_USER = "bench-get";
export const GET_PATH = `${USERS_PATH}/${GET_USER}`;

const SERVER = new URL("../baseline-server.ts", import.meta.url).pathname;

/** The platform's GET response for the bench user, from a throwaway platform. */
async function probeUserGet(): Promise<{
  body: string;
  token: string;
  certFile: string;
  keyFile: string;
  cleanup(): Promise<void>;
}> {
  const platform = await startBenchPlatform();
  try {
    await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: GET_USER }));
    const res = await platform.api.request("GET", GET_PATH);
    if (res.status !== 200) throw new Error(`GET ${GET_PATH}: ${res.status}`);
    // The baseline reads the same serving certificate and key (same key type, same handshake cost).
    const dir = await mkdtemp(join(tmpdir(), "vcp-bench-baseline-"));
    const certFile = join(dir, "serving.crt");
    const keyFile = join(dir, "serving.key");
    await writeFile(certFile, await readFile(join(platform.process.dataDir, "pki", "serving.crt")));
    await writeFile(keyFile, await readFile(join(platform.process.dataDir, "pki", "serving.key")), { mode: 0o600 });
    return {
      body: res.body,
      token: platform.token,
      certFile,
      keyFile,
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  } finally {
    await platform.stop();
  }
}

export const baselineScenario: Scenario = {
  name: "baseline",
  title: "Baseline: bare node:https server, same-size JSON body",
  async run(context) {
    const probe = await probeUserGet();
    const bodyFile = join(tmpdir(), `vcp-bench-body-${process.pid}.json`);
    await writeFile(bodyFile, probe.body);
    const child = spawn(process.execPath, [SERVER, probe.certFile, probe.keyFile, bodyFile], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk) => {
          out += chunk;
          const match = /listening (\d+)/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        child.once("exit", (code) => reject(new Error(`baseline server exited with ${code}`)));
      });
      pinToCpu(child.pid!, SERVER_CPU);
      const bodyBytes = Buffer.byteLength(probe.body);
      context.log(`baseline: body ${bodyBytes} bytes, ${GET_CONNECTIONS} connections`);
      const result = await warmThenLoad(
        {
          url: `https://127.0.0.1:${port}`,
          // Not checked, but sent: the request bytes are the platform's.
          token: probe.token,
          path: GET_PATH,
          connections: GET_CONNECTIONS,
          duration: context.duration,
          serverPid: child.pid,
        },
        context.warmup,
      );
      const baseline = {
        rate: result.rate,
        micros: serverMicrosPerRequest(result),
        p50: result.latency.p50,
        p99: result.latency.p99,
        bodyBytes,
        connections: GET_CONNECTIONS,
      };
      context.baseline = baseline;
      return {
        name: this.name,
        title: this.title,
        tables: [
          {
            columns: LOAD_COLUMNS,
            rows: [loadRow(`GET, ${bodyBytes}-byte JSON body`, GET_CONNECTIONS, result, baseline)],
          },
        ],
        goals: [],
        notes: [],
        data: { bodyBytes, get: loadData(GET_CONNECTIONS, result, baseline) },
      };
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(bodyFile, { force: true });
      await probe.cleanup();
    }
  },
};
