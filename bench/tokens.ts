// Direct cluster endpoint tokens (issue 5), in one run. The platform runs as a child process pinned to CPU 0; this
// process (autocannon, and the offline verifier) is pinned to CPU 1. Each measurement has a baseline from the same
// run, and rounds alternate baseline and measurement (best round of each is reported: load from elsewhere on the
// machine only ever lowers a round):
//   1. token issuance over HTTPS: POST directclusterendpointtokens (ES256, then RS256 after a rotation), against
//      GET /version (the HTTP stack alone) and POST selves (an authenticated create-only action without signing);
//   2. a token as bearer credential: GET of one user with a token, against the same GET with an access key;
//   3. offline verification (createTokenVerifier, JWKS fetched once from the platform) of 1,000 distinct tokens, in
//      batches of 64, against a raw node:crypto verify loop over the same signing inputs (the floor of the check).
//
//   node bench/tokens.ts [--duration seconds] [--rounds n]

import { createPublicKey, verify } from "node:crypto";
import { parseArgs } from "node:util";
import { createTokenVerifier } from "../src/identity/token-verifier.ts";
import { GROUP_VERSION, pool, USERS_PATH } from "./lib/api.ts";
import { type LoadResult, warmThenLoad } from "./lib/load.ts";
import { type BenchPlatform, LOAD_CPU, startBenchPlatform } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt, formatMs, formatRatio } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "5" }, rounds: { type: "string", default: "3" } },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const CONNECTIONS = 32;
const TOKENS = 1000;
const BATCH = 64;
const API = `/apis/${GROUP_VERSION}`;
const TOKEN_BODY = JSON.stringify({
  apiVersion: GROUP_VERSION,
  kind: "DirectClusterEndpointToken",
  spec: { ttl: 3600 },
});

pinToCpu(process.pid, LOAD_CPU);
const log = (message: string) => process.stderr.write(`${message}\n`);
const best = (results: LoadResult[]) => results.reduce((a, b) => (b.rate > a.rate ? b : a));

const http = (platform: BenchPlatform, method: string, path: string, token = platform.token, body?: string) =>
  warmThenLoad(
    { url: platform.url, token, method, path, body, connections: CONNECTIONS, duration, serverPid: platform.pid },
    1,
  );

async function tokens(platform: BenchPlatform, count: number): Promise<string[]> {
  const out: string[] = [];
  await pool(count, 32, async () => {
    const issued = await platform.api.expect<{ status: { token: string } }>(
      201,
      "POST",
      `${API}/directclusterendpointtokens`,
      TOKEN_BODY,
    );
    out.push(issued.status.token);
  });
  return out;
}

/** Calls `step` (one batch) until `seconds` passed; returns items per second. */
async function rate(seconds: number, batch: number, step: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  let done = 0;
  while (performance.now() - started < seconds * 1000) {
    await step();
    done += batch;
  }
  return done / ((performance.now() - started) / 1000);
}

/** Offline verification per second, and the raw node:crypto loop over the same tokens. */
async function offline(platform: BenchPlatform, list: string[]): Promise<{ verifier: number; raw: number }[]> {
  const verifier = createTokenVerifier({ jwksUrl: `${platform.url}/.well-known/jwks.json`, ca: platform.ca });
  await verifier.refresh();
  const jwks = JSON.parse((await platform.api.request("GET", "/.well-known/jwks.json")).body);
  const inputs = list.map((token) => {
    const [h, p, s] = token.split(".");
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    const jwk = jwks.keys.find((k: { kid: string }) => k.kid === header.kid);
    const key = createPublicKey({ key: jwk, format: "jwk" });
    return {
      data: Buffer.from(`${h}.${p}`),
      signature: Buffer.from(s, "base64url"),
      key: header.alg === "ES256" ? { key, dsaEncoding: "ieee-p1363" as const } : key,
    };
  });
  const samples: { verifier: number; raw: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    let i = 0;
    const raw = await rate(duration, BATCH, () => {
      for (let n = 0; n < BATCH; n++) {
        const input = inputs[i++ % inputs.length];
        if (!verify("sha256", input.data, input.key, input.signature)) throw new Error("raw verify failed");
      }
    });
    let j = 0;
    const verified = await rate(duration, BATCH, () =>
      Promise.all(Array.from({ length: BATCH }, () => verifier.verify(list[j++ % list.length]))),
    );
    samples.push({ verifier: verified, raw });
  }
  return samples;
}

const platform = await startBenchPlatform();
const rows: [string, LoadResult, string][] = [];
const offlineRows: [string, { verifier: number; raw: number }[]][] = [];
try {
  const version: LoadResult[] = [];
  const selves: LoadResult[] = [];
  const es256: LoadResult[] = [];
  const rs256: LoadResult[] = [];
  const selvesBody = JSON.stringify({ apiVersion: GROUP_VERSION, kind: "Self", spec: {} });
  const tokenPost = () => http(platform, "POST", `${API}/directclusterendpointtokens`, platform.token, TOKEN_BODY);
  for (let round = 1; round <= rounds; round++) {
    log(`issuance ES256, round ${round}/${rounds}`);
    version.push(await http(platform, "GET", "/version"));
    selves.push(await http(platform, "POST", `${API}/selves`, platform.token, selvesBody));
    es256.push(await tokenPost());
  }
  const esTokens = await tokens(platform, TOKENS);
  const bearer = esTokens[0];
  const withKey: LoadResult[] = [];
  const withToken: LoadResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    log(`GET with a token, round ${round}/${rounds}`);
    withKey.push(await http(platform, "GET", `${USERS_PATH}/admin`));
    withToken.push(await http(platform, "GET", `${USERS_PATH}/admin`, bearer));
  }
  log("offline verification ES256");
  offlineRows.push(["ES256", await offline(platform, esTokens)]);

  await platform.api.expect(201, "POST", `${API}/signingkeyrotations`, {
    apiVersion: GROUP_VERSION,
    kind: "SigningKeyRotation",
    spec: { algorithm: "RS256" },
  });
  for (let round = 1; round <= rounds; round++) {
    log(`issuance RS256, round ${round}/${rounds}`);
    rs256.push(await tokenPost());
  }
  log("offline verification RS256");
  offlineRows.push(["RS256", await offline(platform, await tokens(platform, TOKENS))]);

  const v = best(version).rate;
  const s = best(selves).rate;
  rows.push(["GET /version (baseline)", best(version), "1.00"]);
  rows.push(["POST selves (baseline)", best(selves), formatRatio(s / v)]);
  rows.push(["POST directclusterendpointtokens ES256", best(es256), formatRatio(best(es256).rate / v)]);
  rows.push(["POST directclusterendpointtokens RS256", best(rs256), formatRatio(best(rs256).rate / v)]);
  rows.push(["GET user, access key", best(withKey), formatRatio(best(withKey).rate / v)]);
  rows.push(["GET user, ES256 token", best(withToken), formatRatio(best(withToken).rate / v)]);
  const issuance = {
    es: best(es256).rate / s,
    rs: best(rs256).rate / s,
    bearer: best(withToken).rate / best(withKey).rate,
  };
  console.log(`\nToken issuance over HTTPS: best of ${rounds} rounds of ${duration} s, ${CONNECTIONS} connections\n`);
  console.log("| measurement | req/s | vs GET /version | p50 ms | p99 ms | server CPU | statuses |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [name, result, ratio] of rows) {
    const cpu = result.serverCpu === undefined ? "-" : `${Math.round(result.serverCpu * 100)}%`;
    const statuses = Object.entries(result.status)
      .map(([code, n]) => `${code}×${n}`)
      .join(" ");
    console.log(
      `| ${name} | ${formatInt(result.rate)} | ${ratio} | ${formatMs(result.latency.p50)} | ${formatMs(result.latency.p99)} | ${cpu} | ${statuses} |`,
    );
  }
  console.log(
    `\nIssuance vs POST selves: ES256 ${formatRatio(issuance.es)}, RS256 ${formatRatio(issuance.rs)}; GET with a token vs with an access key: ${formatRatio(issuance.bearer)}`,
  );
  console.log(
    `\nOffline verification (one process, ${TOKENS} distinct tokens, batches of ${BATCH}), best of ${rounds}\n`,
  );
  console.log("| algorithm | verifier tokens/s | raw node:crypto verify/s | verifier vs raw | all rounds (verifier) |");
  console.log("|---|---|---|---|---|");
  for (const [alg, samples] of offlineRows) {
    const bestVerifier = Math.max(...samples.map((x) => x.verifier));
    const bestRaw = Math.max(...samples.map((x) => x.raw));
    console.log(
      `| ${alg} | ${formatInt(bestVerifier)} | ${formatInt(bestRaw)} | ${formatRatio(bestVerifier / bestRaw)} | ${samples.map((x) => formatInt(x.verifier)).join(" / ")} |`,
    );
  }
} finally {
  await platform.stop();
}
