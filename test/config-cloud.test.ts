// The Config's cloud block on a real platform: releaseChannel in /version, `virtualcluster version` and the
// console's settings; the maintenance window in the Config's status, and one real run inside a window (the store
// rebuilt and a scheduled encryption key rotation), while a window elsewhere in the week holds both back.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliRun, runCli } from "./support/cli-run.ts";
import { send } from "./support/https-json.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const CONFIG = "/apis/management.platform.sh/v1/configs/platform-config";
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const hhmm = (date: Date) => date.toISOString().slice(11, 16);

/** A window that opened a minute ago and lasts an hour (crossing midnight if it must). */
function windowAroundNow(): { dayOfWeek: string; timeWindow: string } {
  const start = new Date(Date.now() - 60_000);
  const end = new Date(start.getTime() + 3600_000);
  return { dayOfWeek: WEEKDAYS[start.getUTCDay()], timeWindow: `${hhmm(start)}-${hhmm(end)}` };
}

/** A window that opens in three days. */
function windowLater(): { dayOfWeek: string; timeWindow: string } {
  return { dayOfWeek: WEEKDAYS[(new Date().getUTCDay() + 3) % 7], timeWindow: "02:00-03:00" };
}

describe("cloud: release channel and maintenance window", () => {
  let platform: PlatformProcess;
  const root = mkdtempSync(join(tmpdir(), "vcp-cloud-"));

  const cli = (args: string[]): Promise<CliRun> => {
    const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home"), HOME: root };
    for (const name of ["KUBECONFIG", "LICENSE", "CI"]) delete env[name];
    return runCli(args, { env });
  };
  const writeCloud = async (cloud: Record<string, unknown>) => {
    const raw = `cloud: ${JSON.stringify(cloud)}\n`;
    const reply = await send(platform, "PATCH", CONFIG, {
      token: platform.adminKey,
      body: { spec: { raw } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };
  const status = async () =>
    (await send(platform, "GET", CONFIG, { token: platform.adminKey })).json() as {
      status: { maintenance?: Record<string, unknown> & { lastRun?: { time: string; results: string[] } } };
    };

  const later = windowLater();

  before(async () => {
    // The first Config already holds the window back: the rotation falls due (2 s) long before it opens.
    const configFile = join(root, "config.yaml");
    writeFileSync(configFile, `cloud: ${JSON.stringify({ maintenanceWindow: later })}\n`);
    platform = await startPlatformProcess({
      extraArgs: [
        ...["--config", configFile, "--maintenance-check-interval", "1s"],
        ...["--encryption-key-rotation-interval", "2s"],
      ],
      env: { LOG_LEVEL: "info" },
    });
    const caFile = join(platform.dataDir, "pki", "ca.crt");
    const login = await cli([
      "platform",
      "login",
      platform.url,
      "--ca-file",
      caFile,
      "--access-key",
      platform.adminKey,
    ]);
    assert.equal(login.code, 0, login.stderr);
  });
  after(async () => {
    await platform?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a window later in the week shows as the next one in the Config's status and holds the work back", async () => {
    await waitFor(async () => (await status()).status.maintenance?.open === false, "the next window in the status");
    const { maintenance } = (await status()).status;
    const start = new Date(String(maintenance?.nextWindowStart));
    assert.equal(WEEKDAYS[start.getUTCDay()], later.dayOfWeek);
    assert.equal(hhmm(start), "02:00");
    assert.equal(hhmm(new Date(String(maintenance?.nextWindowEnd))), "03:00");
    assert.ok(start.getTime() > Date.now());
    // The rotation's interval (2 s) passes, but it waits for the window.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal((await status()).status.maintenance?.lastRun, undefined);
    assert.doesNotMatch(platform.stderr(), /maintenance: /);
  });

  it("releaseChannel shows in /version, `virtualcluster version` and the console's settings", async () => {
    const plain = (await send(platform, "GET", "/version")).json() as Record<string, string>;
    assert.equal(plain.releaseChannel, undefined);
    await writeCloud({ releaseChannel: "stable", maintenanceWindow: later });
    const version = (await send(platform, "GET", "/version")).json() as Record<string, string>;
    assert.equal(version.releaseChannel, "stable");
    assert.ok(version.gitVersion);
    const run = await cli(["version"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\nPlatform: \S+ at \S+ \(release channel stable\)\n$/);
    const settings = (await send(platform, "GET", "/console/settings")).json() as Record<string, string>;
    assert.equal(settings.releaseChannel, "stable");
  });

  it("inside the window the platform rebuilds its store and rotates the due encryption key, once", async () => {
    await writeCloud({ maintenanceWindow: windowAroundNow() });
    await waitFor(async () => {
      const results = (await status()).status.maintenance?.lastRun?.results ?? [];
      return results.some((line) => line.startsWith("store rebuild: rebuilt"));
    }, "the store rebuild in the window");
    const { maintenance } = (await status()).status;
    assert.equal(maintenance?.open, true);
    assert.ok(new Date(String(maintenance?.nextWindowStart)).getTime() <= Date.now());
    assert.ok(
      maintenance?.lastRun?.results.some((line) => /^encryption-key rotation: new key \S+, \d+ values/.test(line)),
      JSON.stringify(maintenance?.lastRun),
    );
    // The rebuild runs once per window: later checks only rotate what is due again.
    await waitFor(
      async () => (platform.stderr().match(/maintenance: encryption-key rotation/g) ?? []).length >= 2,
      "a second scheduled rotation",
    );
    assert.equal((platform.stderr().match(/maintenance: store rebuild/g) ?? []).length, 1);
    // The platform still serves, on the rebuilt store with the new key.
    assert.equal((await send(platform, "GET", CONFIG, { token: platform.adminKey })).status, 200);
  });
});
