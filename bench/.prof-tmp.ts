// Ad-hoc profiling helper (not committed).
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { send } from "../test/support/https-json.ts";
import { benchUser, USERS_PATH } from "./lib/api.ts";
import { load } from "./lib/load.ts";
import { pinToCpu } from "./lib/proc.ts";
import { GET_PATH, GET_USER } from "./scenarios/baseline.ts";

const level = Number(process.argv[2] ?? 1);
const profDir = process.argv[3] ?? "/tmp/i19prof";
const tree = process.argv[4] ?? "/work/wt-issue19";
const dataDir = await mkdtemp(join(tmpdir(), "prof-"));
const child = spawn(process.execPath, [...(process.env.PROF ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []), join(tree, "src/cli/main.ts"), "platform", "start", "--data-dir", dataDir, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LOG_LEVEL: "warn" } });
let out = "";
const url = await new Promise<string>((resolve) => child.stdout!.on("data", (c) => { out += c; const m = /listening on (https:\/\/\S+)/.exec(out); if (m) resolve(m[1]); }));
pinToCpu(child.pid!, 0);
pinToCpu(process.pid, 1);
const adminKey = (await readFile(join(dataDir, "admin-access-key"), "utf8")).trim();
const caPem = await readFile(join(dataDir, "pki", "ca.crt"), "utf8");
const platform = { url, adminKey, caPem } as never;
await send(platform, "POST", USERS_PATH, { token: adminKey, body: benchUser({ name: GET_USER }) });
if (level) {
  const r = await send(platform, "PATCH", "/apis/management.platform.sh/v1/configs/platform-config", { token: adminKey, contentType: "application/merge-patch+json", body: { spec: { raw: `audit: {enabled: true, level: ${level}, path: ${join(dataDir, "audit.log")}}\n` } } });
  if (r.status !== 200) throw new Error(r.body);
}
const opts = { url, token: adminKey, path: GET_PATH, connections: 32 };
await load({ ...opts, amount: 5000 });
import { readdirSync, readFileSync } from "node:fs";
const tasks = () => Object.fromEntries(readdirSync(`/proc/${child.pid}/task`).map((tid) => { const st = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, "utf8"); const f = st.slice(st.lastIndexOf(")") + 2).split(" "); const name = readFileSync(`/proc/${child.pid}/task/${tid}/comm`, "utf8").trim(); return [`${tid}:${name}`, (Number(f[11]) + Number(f[12])) * 10]; }));
const t0 = tasks();
const res = await load({ ...opts, amount: 30000, serverPid: child.pid });
const t1 = tasks();
for (const k of Object.keys(t1)) { const d = t1[k] - (t0[k] ?? 0); if (d > 0) console.log("thread", k, ((d * 1000) / res.ok).toFixed(1), "us/req"); }
console.log("rate", res.rate.toFixed(0), "serverCpu", res.serverCpu?.toFixed(2), "other", res.otherCpu.toFixed(2));
child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
