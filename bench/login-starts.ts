// Unauthenticated login starts against the store (issue 30 item 1). A platform on the embedded store with a store
// quota, an OIDC connector (the tests' OpenID provider) and an OpenID client of the platform's own provider; then a
// flood of login starts nobody finishes, half `GET /auth/oidc/login` (single sign-on) and half `GET /oidc/auth`
// (the platform's OpenID provider, a registered client), over HTTPS with keep-alive, while an authenticated write
// (PATCH of a user, as the admin) goes in every second. Reported: the store's bytes in use before and after (the
// running platform's own figures, as `platform store-info` shows them), its revision (one per write), the answers
// of the starts, and every authenticated write that was refused (507: the quota).
//
//   node bench/login-starts.ts [--starts 100000] [--connections 32] [--quota-mib 16]

import { once } from "node:events";
import { parseArgs } from "node:util";
import { readStoreInfo } from "../src/platform/store-info.ts";
import { oidcBlockYaml, startOidcTestProvider } from "../test/support/oidc-test-provider.ts";
import { startPlatformProcess } from "../test/support/platform-process.ts";
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
  },
});
const starts = Number(values.starts);
const connections = Number(values.connections);
const quotaBytes = Number(values["quota-mib"]) * 1024 * 1024;
const MIB = 1024 * 1024;
const log = (message: string) => process.stderr.write(`${message}\n`);

pinToCpu(process.pid, LOAD_CPU);
const platform = await startPlatformProcess({ extraArgs: ["--store-quota-bytes", String(quotaBytes)] });
pinToCpu(platform.child.pid ?? 0, SERVER_CPU);
const api = new ApiClient(platform.url, platform.adminKey, platform.caPem);
const provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
const CLIENT = { id: "wiki", secret: "wiki-client-s3cret-bench", redirect: "https://wiki.example.test/oauth" };

/** The store as the running platform reports it (its monitor reads the file four times a second). */
async function store(): Promise<{ inUse: number; revision: number }> {
  const { info } = await readStoreInfo({ dataDir: platform.dataDir });
  return { inUse: info.stats?.inUseBytes ?? Number.NaN, revision: info.stats?.revision ?? Number.NaN };
}

/** An authenticated write every second during the flood; resolves to the statuses that were not 200. */
function writesDuring(): { stop(): Promise<{ writes: number; refused: number[] }> } {
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
  // Settle: the Config write and the first requests' one-time work (cookie keys, connector discovery).
  await load({ url: platform.url, token: "", anonymous: true, path: "/", connections: 2, amount: 20, requests });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = await store();
  log(`store before: ${(before.inUse / MIB).toFixed(2)} MiB in use, revision ${before.revision}; ${starts} starts`);
  const writes = writesDuring();
  const flood = await load({
    url: platform.url,
    token: "",
    anonymous: true,
    path: "/",
    connections,
    amount: starts,
    requests,
    serverPid: platform.child.pid,
  });
  const written = await writes.stop();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await store();
  const grew = after.inUse - before.inUse;
  console.log("\n| unauthenticated login starts | value |");
  console.log("|---|---:|");
  const { responses, seconds } = flood;
  const answers = Object.entries(flood.status).map(([code, n]) => `${code}: ${formatInt(n)}`);
  console.log(`| starts sent (half /auth/oidc/login, half /oidc/auth) | ${formatInt(responses)} |`);
  console.log(`| answers; connection errors | ${answers.join(", ")}; ${flood.errors + flood.timeouts} |`);
  console.log(`| time, rate | ${seconds.toFixed(1)} s, ${formatInt(responses / seconds)}/s |`);
  console.log(`| server CPU per start | ${(((flood.serverCpu ?? 0) * seconds * 1000) / responses).toFixed(2)} ms |`);
  console.log(
    `| store in use before → after (quota ${formatInt(quotaBytes / MIB)} MiB) | ${(before.inUse / MIB).toFixed(2)} → ${(after.inUse / MIB).toFixed(2)} MiB (${grew >= 0 ? "+" : ""}${(grew / 1024).toFixed(0)} KiB) |`,
  );
  console.log(`| store revision before → after (one per write) | ${before.revision} → ${after.revision} |`);
  console.log(
    `| authenticated writes during the flood, refused | ${written.writes}, ${written.refused.length}${written.refused.length ? ` (${[...new Set(written.refused)].join(", ")})` : ""} |`,
  );
  const goal = Math.abs(grew) <= MIB && written.refused.length === 0;
  console.log(
    `\ngoal (store within 1 MiB of where it began, no authenticated write refused): ${goal ? "met" : "NOT met"}`,
  );
} finally {
  api.close();
  await provider.close();
  await platform.stop();
  if (platform.child.exitCode === null) await once(platform.child, "exit");
}
