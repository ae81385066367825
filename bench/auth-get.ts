// Access-key authentication cost (issue 3), in one run. Two platform servers run as child processes pinned to CPU 0
// (autocannon here, pinned to CPU 1): A with 1 access key stored, B with 10,000. The GET measurements alternate
// A, B, B-rotating for several rounds and report the best round of each (load from elsewhere on the machine only
// ever lowers a round, and alternating spreads it over all three):
//   1. authenticated GET of one user with 1 access key stored (the core GET, through real authn/authz);
//   2. the same GET with 10,000 access keys stored, same key;
//   3. the same GET with 10,000 keys stored, each request with one of 1,000 different keys (index and caches);
//   4. password login throughput on A (scrypt, deliberately slow; every login also creates a Login key).
//
//   node bench/auth-get.ts [--duration seconds] [--rounds n] [--keys count]

import { parseArgs } from "node:util";
import { benchUser, GROUP_VERSION, pool, USERS_PATH } from "./lib/api.ts";
import { type AutocannonRequest, type LoadResult, warmThenLoad } from "./lib/load.ts";
import { type BenchPlatform, LOAD_CPU, startBenchPlatform } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt, formatMs, formatRatio } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    keys: { type: "string", default: "10000" },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const keyCount = Number(values.keys);
const CONNECTIONS = 32;
const LOGIN_CONNECTIONS = 8;
const ROTATING_KEYS = 1000;
const USER = "bench-get";
const PATH = `${USERS_PATH}/${USER}`;
const PASSWORD = "bench-password-0123";

pinToCpu(process.pid, LOAD_CPU);
const log = (message: string) => process.stderr.write(`${message}\n`);

const get = (platform: BenchPlatform, requests?: AutocannonRequest[]) =>
  warmThenLoad(
    {
      url: platform.url,
      token: platform.token,
      path: PATH,
      connections: CONNECTIONS,
      duration,
      serverPid: platform.pid,
      requests,
    },
    1,
  );

const one = await startBenchPlatform();
const many = await startBenchPlatform();
const samples: LoadResult[][] = [[], [], []];
let login: LoadResult | undefined;
try {
  for (const platform of [one, many]) await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: USER }));
  log(`storing ${keyCount - 1} more access keys on server B`);
  const keys: string[] = [];
  await pool(keyCount - 1, 64, async (i) => {
    const created = await many.api.expect<{ spec: { key: string } }>(
      201,
      "POST",
      `/apis/${GROUP_VERSION}/ownedaccesskeys`,
      {
        apiVersion: GROUP_VERSION,
        kind: "OwnedAccessKey",
        metadata: { name: `bench-key-${i}` },
        spec: { user: "admin", displayName: `bench ${i}` },
      },
    );
    if (keys.length < ROTATING_KEYS) keys.push(created.spec.key);
  });
  let next = 0;
  const rotating: AutocannonRequest[] = [
    {
      method: "GET",
      path: PATH,
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, authorization: `Bearer ${keys[next++ % keys.length]}` },
      }),
    },
  ];
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}`);
    samples[0].push(await get(one));
    samples[1].push(await get(many));
    samples[2].push(await get(many, rotating));
  }

  log("password login");
  await one.api.expect(201, "POST", `${USERS_PATH}/${USER}/password`, { spec: { password: PASSWORD } });
  login = await warmThenLoad(
    {
      url: one.url,
      token: one.token,
      method: "POST",
      path: "/auth/password/login",
      body: JSON.stringify({ username: USER, password: PASSWORD }),
      connections: LOGIN_CONNECTIONS,
      duration: duration * 2,
      serverPid: one.pid,
    },
    1,
  );
} finally {
  await one.stop();
  await many.stop();
}

const best = (results: LoadResult[]) => results.reduce((a, b) => (b.rate > a.rate ? b : a));
const rows: [string, number, LoadResult][] = [
  ["GET user, 1 key stored", CONNECTIONS, best(samples[0])],
  [`GET user, ${formatInt(keyCount)} keys stored`, CONNECTIONS, best(samples[1])],
  [`GET user, ${formatInt(keyCount)} stored, ${ROTATING_KEYS} keys in turn`, CONNECTIONS, best(samples[2])],
];
if (login) rows.push(["POST /auth/password/login", LOGIN_CONNECTIONS, login]);
const base = rows[0][2].rate;
console.log(
  `\nAccess-key authentication: best of ${rounds} rounds of ${duration} s (login: one ${duration * 2} s run)\n`,
);
console.log("| measurement | conns | req/s | vs 1 key | p50 ms | p99 ms | server CPU | all rounds req/s |");
console.log("|---|---|---|---|---|---|---|---|");
rows.forEach(([name, connections, result], i) => {
  const cpu = result.serverCpu === undefined ? "-" : `${Math.round(result.serverCpu * 100)}%`;
  const all =
    i < 3
      ? samples[i].map((r) => formatInt(r.rate)).join(" / ")
      : Object.entries(result.status)
          .map(([c, n]) => `${c}×${n}`)
          .join(" ");
  console.log(
    `| ${name} | ${connections} | ${formatInt(result.rate)} | ${formatRatio(result.rate / base)} | ${formatMs(result.latency.p50)} | ${formatMs(result.latency.p99)} | ${cpu} | ${all} |`,
  );
});
