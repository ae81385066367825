// The platform as an OpenID provider (issue 20): requests per second of its token endpoint, in one run. The
// platform runs as a child process pinned to CPU 0; this process (the browser that makes codes, and autocannon) is
// pinned to CPU 1. Each round measures, one after the other (A/B interleaved), and the best round of each counts
// (load from elsewhere on the machine only ever makes a round slower):
//   1. GET /version under load (the HTTP stack alone: the baseline);
//   2. the refresh grant under load (one confidential client, one refresh token, client_secret_basic): the token
//      and its grant read from the encrypted store, the user checked, an access token written, an ID token signed;
//   3. the code exchange under load: `--codes` fresh codes made just before (a signed-in browser's authorization
//      requests), each exchanged once (code consumed, access and refresh token written, ID token signed).
//
//   node bench/oidc-provider.ts [--duration seconds] [--rounds n] [--codes n]

import { parseArgs } from "node:util";
import { TestBrowser } from "../test/support/browser.ts";
import { setPlatformConfig } from "../test/support/sso-platform.ts";
import { GROUP_VERSION, pool } from "./lib/api.ts";
import { type AutocannonRequest, type LoadResult, load, warmThenLoad } from "./lib/load.ts";
import { LOAD_CPU, startBenchPlatform } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt, formatMs, formatRatio } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    codes: { type: "string", default: "1000" },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const codeCount = Number(values.codes);
const CONNECTIONS = 32;
const CLIENT = { id: "bench", secret: "bench-client-secret-0123456789", redirect: "https://bench.example.test/cb" };
const BASIC = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}`;
const FORM = "application/x-www-form-urlencoded";

pinToCpu(process.pid, LOAD_CPU);
const log = (message: string) => process.stderr.write(`${message}\n`);

const platform = await startBenchPlatform();
await platform.api.expect(201, "POST", `/apis/${GROUP_VERSION}/users`, {
  apiVersion: GROUP_VERSION,
  kind: "User",
  metadata: { name: "bench" },
  spec: { username: "bench", displayName: "Bench User", email: "bench@example.com" },
});
await platform.api.expect(201, "POST", `/apis/${GROUP_VERSION}/users/bench/password`, {
  spec: { password: "bench-password-1" },
});
await setPlatformConfig(
  platform.process,
  `oidc:\n  clients:\n  - {clientId: ${CLIENT.id}, clientSecret: ${CLIENT.secret}, redirectURIs: ['${CLIENT.redirect}']}\n`,
);
const login = await platform.api.request(
  "POST",
  "/auth/password/login",
  JSON.stringify({ username: "bench", password: "bench-password-1" }),
);
const browser = new TestBrowser([platform.ca]);
await browser.jar.setCookie(`vcp_session=${JSON.parse(login.body).accessKey}; Path=/; Secure`, platform.url);

const authorizeUrl = () => {
  const url = new URL(`${platform.url}/oidc/auth`);
  url.search = new URLSearchParams({
    client_id: CLIENT.id,
    response_type: "code",
    redirect_uri: CLIENT.redirect,
    scope: "openid profile email groups",
    state: "bench",
  }).toString();
  return url.toString();
};

/** One authorization of the signed-in browser, following the provider's redirects to the client's code. */
async function makeCode(): Promise<string> {
  let current = authorizeUrl();
  for (let hop = 0; hop < 10; hop++) {
    const response = await browser.fetch(current);
    const next = new URL(String(response.headers.location ?? ""), current);
    if (response.status < 300 || response.status >= 400) throw new Error(`authorization answered ${response.status}`);
    if (next.toString().startsWith(CLIENT.redirect)) {
      const code = next.searchParams.get("code");
      if (!code) throw new Error(`no code: ${next.search}`);
      return code;
    }
    current = next.toString();
  }
  throw new Error("too many redirects");
}

async function exchange(code: string): Promise<Record<string, string>> {
  const response = await browser.fetch(`${platform.url}/oidc/token`, {
    form: { grant_type: "authorization_code", code, redirect_uri: CLIENT.redirect },
    headers: { authorization: BASIC, accept: "application/json" },
  });
  if (response.status !== 200) throw new Error(`code exchange answered ${response.status}: ${response.body}`);
  return JSON.parse(response.body);
}

const tokenRequest = (body: () => string): AutocannonRequest[] => [
  {
    method: "POST",
    path: "/oidc/token",
    headers: { authorization: BASIC, "content-type": FORM, accept: "application/json" },
    setupRequest: (request) => ({ ...request, body: body() }),
  },
];

const refreshToken = (await exchange(await makeCode())).refresh_token;
if (!refreshToken) throw new Error("no refresh token issued");
const refreshBody = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString();

const common = { url: platform.url, token: platform.token, connections: CONNECTIONS, serverPid: platform.pid };
const best = (results: LoadResult[]) => results.reduce((a, b) => (b.rate > a.rate ? b : a));

try {
  const version: LoadResult[] = [];
  const refresh: LoadResult[] = [];
  const codes: LoadResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}: GET /version, refresh grant, ${codeCount} code exchanges`);
    version.push(await warmThenLoad({ ...common, path: "/version", duration }, 1));
    refresh.push(
      await warmThenLoad({ ...common, path: "/oidc/token", duration, requests: tokenRequest(() => refreshBody) }, 1),
    );
    const fresh: string[] = [];
    await pool(codeCount, 8, async () => {
      fresh.push(await makeCode());
    });
    const body = () =>
      new URLSearchParams({
        grant_type: "authorization_code",
        code: fresh.pop() ?? "",
        redirect_uri: CLIENT.redirect,
      }).toString();
    codes.push(await load({ ...common, path: "/oidc/token", amount: codeCount, requests: tokenRequest(body) }));
  }
  const v = best(version);
  // Server CPU per request is the steadier figure on a shared machine: it does not count the time the server waited.
  const cpuMs = (r: LoadResult) => (r.serverCpu === undefined || !r.rate ? Number.NaN : (r.serverCpu / r.rate) * 1000);
  const row = (name: string, r: LoadResult) =>
    `| ${name} | ${formatInt(r.rate)} | ${formatRatio(r.rate / v.rate)} | ${formatMs(r.latency.p50)} / ${formatMs(r.latency.p99)} | ${cpuMs(r).toFixed(3)} | ${formatRatio(cpuMs(r) / cpuMs(v))} | ${Object.entries(
      r.status,
    )
      .map(([code, n]) => `${code}: ${n}`)
      .join(", ")} |`;
  console.log(
    `\n| over HTTPS, ${CONNECTIONS} connections | req/s | vs GET /version | p50 / p99 ms | server CPU ms/req | CPU vs GET /version | answers |`,
  );
  console.log("|---|---:|---:|---|---:|---:|---|");
  console.log(row("GET /version (baseline)", v));
  console.log(row("POST /oidc/token, refresh grant", best(refresh)));
  console.log(row(`POST /oidc/token, code exchange (${codeCount} codes)`, best(codes)));
} finally {
  await platform.stop();
}
