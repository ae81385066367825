// Unauthenticated login starts against the store (issue 30 item 1). A platform on the embedded store with a store
// quota, an OIDC connector (the tests' OpenID provider) and an OpenID client of the platform's own provider; then a
// flood of login starts nobody finishes, half `GET /auth/oidc/login` (single sign-on) and half `GET /oidc/auth`
// (the platform's OpenID provider, a registered client), over HTTPS with keep-alive, while an authenticated write
// (PATCH of a user, as the admin) goes in every second. Reported: the store's bytes in use before and after (the
// running platform's own figures, as `platform store-info` shows them), its revision (one per write), the answers
// of the starts, the server's CPU per start (from /proc: it holds on a busy machine), and every authenticated write
// that was refused (507: the quota). With --baseline, the same flood first runs against another tree's platform
// (an A/B run: e.g. a worktree of the commit before the change).
//
//   node bench/login-starts.ts [--starts 100000] [--connections 32] [--quota-mib 16] [--baseline <tree>/src/cli/main.ts]

import { once } from "node:events";
import { parseArgs } from "node:util";
import { readStoreInfo } from "../src/platform/store-info.ts";
import { oidcBlockYaml, startOidcTestProvider } from "../test/support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "../test/support/platform-process.ts";
import { setPlatformConfig, tempFile } from "../test/support/sso-platform.ts";
import { ApiClient, GROUP_VERSION } from "./lib/api.ts";
import { type AutocannonRequest, load } from "./lib/load.ts";
import { LOAD_CPU, SERVER_CPU } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    starts: { type: "string", default: "100000" },
    connections: { type: "string", default: "32" },
    "quota-mib": { type: "string", default: "16" },
    baseline: { type: "string" },
  },
});
const starts = Number(values.starts);
const connections = Number(values.connections);
const quotaBytes = Number(values["quota-mib"]) * 1024 * 1024;
const MIB = 1024 * 1024;
const CLIENT = { id: "wiki", secret: "wiki-client-s3cret-bench", redirect: "https://wiki.example.test/oauth" };
const log = (message: string) => process.stderr.write(`${message}\n`);

interface Flood {
  responses: number;
  answers: string;
  seconds: number;
  cpuMsPerStart: number;
  before: { inUse: number; revision: number };
  after: { inUse: number; revision: number };
  writes: number;
  refused: number[];
}

/** The store as the running platform reports it (its monitor reads the file four times a second). */
async function store(platform: PlatformProcess): Promise<{ inUse: number; revision: number }> {
  const { info } = await readStoreInfo({ dataDir: platform.dataDir });
  return { inUse: info.stats?.inUseBytes ?? Number.NaN, revision: info.stats?.revision ?? Number.NaN };
}

/** An authenticated write every second until stopped; resolves to how many went in and the refused statuses. */
function writesDuring(api: ApiClient): { stop(): Promise<{ writes: number; refused: number[] }> } {
  let writes = 0;
  const refused: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const reply = await api.request(
        "PATCH",
        `/apis/${GROUP_VERSION}/users/admin`,
        { metadata: { annotations: { "bench/at": String(Date.now()) } } },
        "application/merge-patch+json",
      );
      writes++;
      if (reply.status !== 200) refused.push(reply.status);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { writes, refused };
    },
  };
}

/** One platform (this tree's, or the one of `main`), flooded. */
async function flood(main: string | undefined): Promise<Flood> {
  const platform = await startPlatformProcess({ main, extraArgs: ["--store-quota-bytes", String(quotaBytes)] });
  pinToCpu(platform.child.pid ?? 0, SERVER_CPU);
  const api = new ApiClient(platform.url, platform.adminKey, platform.caPem);
  const provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
  try {
    await setPlatformConfig(
      platform,
      `oidc:
  clients:
  - name: Wiki
    clientId: ${CLIENT.id}
    clientSecret: ${CLIENT.secret}
    redirectURIs: [${CLIENT.redirect}]
auth:
  oidc:
${oidcBlockYaml(provider, {
  callbackUrl: `${platform.url}/auth/oidc/callback`,
  caFile: await tempFile("provider-ca.pem", provider.tls.caPem),
  indent: "    ",
})}`,
    );
    const authorize = new URLSearchParams({
      client_id: CLIENT.id,
      response_type: "code",
      scope: "openid profile",
      redirect_uri: CLIENT.redirect,
      state: "bench-state-0123456789",
      nonce: "bench-nonce-0123456789",
    });
    const requests: AutocannonRequest[] = [
      { method: "GET", path: "/auth/oidc/login?return=%2Fprojects", headers: { accept: "text/html" } },
      { method: "GET", path: `/oidc/auth?${authorize}`, headers: { accept: "text/html" } },
    ];
    const target = { url: platform.url, token: "", anonymous: true, path: "/", requests };
    // Settle: the Config write and the first requests' one-time work (cookie keys, connector discovery).
    await load({ ...target, connections: 2, amount: 20 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await store(platform);
    log(`${main ?? "this tree"}: ${(before.inUse / MIB).toFixed(2)} MiB in use, revision ${before.revision}`);
    const writes = writesDuring(api);
    const result = await load({ ...target, connections, amount: starts, serverPid: platform.child.pid });
    const written = await writes.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return {
      responses: result.responses,
      answers: Object.entries(result.status)
        .map(([code, n]) => `${code}: ${formatInt(n)}`)
        .join(", "),
      seconds: result.seconds,
      cpuMsPerStart: ((result.serverCpu ?? 0) * result.seconds * 1000) / result.responses,
      before,
      after: await store(platform),
      ...written,
    };
  } finally {
    api.close();
    await provider.close();
    await platform.stop();
    if (platform.child.exitCode === null) await once(platform.child, "exit");
  }
}

pinToCpu(process.pid, LOAD_CPU);
const runs: [string, Flood][] = [];
if (values.baseline) runs.push(["baseline", await flood(values.baseline)]);
runs.push(["this tree", await flood(undefined)]);

const mib = (bytes: number) => (bytes / MIB).toFixed(2);
const row = (label: string, cell: (run: Flood) => string) =>
  console.log(`| ${label} | ${runs.map(([, run]) => cell(run)).join(" | ")} |`);
console.log(
  `\n| ${formatInt(starts)} unauthenticated login starts, quota ${formatInt(quotaBytes / MIB)} MiB | ${runs.map(([name]) => name).join(" | ")} |`,
);
console.log(`|---|${runs.map(() => "---:").join("|")}|`);
row("answers (half /auth/oidc/login, half /oidc/auth)", (run) => run.answers);
row("time, rate", (run) => `${run.seconds.toFixed(0)} s, ${formatInt(run.responses / run.seconds)}/s`);
row("server CPU per start", (run) => `${run.cpuMsPerStart.toFixed(2)} ms`);
row("store in use before → after", (run) => `${mib(run.before.inUse)} → ${mib(run.after.inUse)} MiB`);
row("store revisions written (one per write)", (run) => formatInt(run.after.revision - run.before.revision));
row("authenticated writes during the flood, refused", (run) => `${run.writes}, ${run.refused.length}`);
const current = runs[runs.length - 1][1];
const met = Math.abs(current.after.inUse - current.before.inUse) <= MIB && current.refused.length === 0;
console.log(
  `\ngoal (this tree: store within 1 MiB of where it began, no authenticated write refused): ${met ? "met" : "NOT met"}`,
);
