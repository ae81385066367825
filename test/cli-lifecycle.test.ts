// The lifecycle a user expects, with the real CLI against a real platform and host API server: `create --upgrade`
// keeps the stored settings unless a file replaces them (or --reset-settings drops them) and says what changed;
// pause and resume; delete and connect without -n; delete removes the contexts connect added and switches back;
// progress lines while create waits; `version` with the platform's version.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, KubeConfig, type V1Endpoints } from "@kubernetes/client-node";
import { parse, stringify } from "yaml";
import { API, AuthClient } from "./support/auth-client.ts";
import {
  processAlive as alive,
  assertCliFailure,
  type CliRun,
  runCli,
  stopBackgroundRuntime,
} from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const root = mkdtempSync(join(tmpdir(), "vc-cli-lifecycle-"));
const home = join(root, ".virtualcluster");
const kubeconfigFile = join(root, ".kube", "config");

function cli(args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: home, HOME: root, LOG_LEVEL: "info" };
  for (const name of ["KUBECONFIG", "LICENSE", "NO_COLOR", "CI"]) delete env[name];
  return runCli(args, { env });
}

function assertOk(run: CliRun): void {
  assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);
}

const pidOf = (namespace: string, name: string) =>
  Number(readFileSync(join(home, "clusters", namespace, name, "runtime.pid"), "utf8"));

/** Settings with one endpoints patch, with a comment the stored copy must keep. */
const settingsWith = (patch: Record<string, string>) =>
  `# team app\n${stringify({ sync: { toHost: { endpoints: { patches: [patch] } } } })}`;
const OWNER = { path: 'metadata.annotations["owner"]', expression: 'value + " (" + context.vcluster.name + ")"' };
const WITH_PATCH = settingsWith(OWNER);

describe("virtualcluster lifecycle commands", () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let core: CoreV1Api;
  let client: AuthClient;
  const file = (name: string, text: string) => {
    const path = join(root, name);
    writeFileSync(path, text);
    return path;
  };
  const storedSettings = async () => {
    const secret = await core.readNamespacedSecret({ namespace: "team-app", name: "vc-config-app" });
    return Buffer.from(secret.data?.["config.yaml"] ?? "", "base64").toString("utf8");
  };
  const create = (...args: string[]) =>
    cli(["create", "app", "-n", "team-app", "--host-kubeconfig", host.kubeconfig, ...args]);

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    const config = new KubeConfig();
    config.loadFromFile(host.kubeconfig);
    core = config.makeApiClient(CoreV1Api);
    client = new AuthClient(platform.url, platform.caPem);
    const caFile = join(platform.dataDir, "pki", "ca.crt");
    assertOk(await cli(["platform", "login", platform.url, "--ca-file", caFile, "--access-key", platform.adminKey]));
  });

  after(async () => {
    stopBackgroundRuntime(join(home, "clusters", "team-app", "app"));
    client?.agent.destroy();
    await Promise.all([platform?.stop(), host?.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  it("version prints the client's version and, when logged in, the platform's", async () => {
    const run = await cli(["version"]);
    assertOk(run);
    const version = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
    assert.match(run.stdout, new RegExp(`^Client: virtualcluster ${version} \\(Node\\.js v24\\.`));
    assert.match(run.stdout, new RegExp(`\\nPlatform: ${version} at ${platform.url}\\n$`));
  });

  it("create prints a progress line while it waits for the virtual cluster", async () => {
    const run = await create("-f", file("app.yaml", WITH_PATCH));
    assertOk(run);
    assert.match(run.stderr, /^Starting virtual cluster app\.\.\.$/m);
    assert.match(run.stdout, /^Created virtual cluster app in namespace team-app: https:/);
  });

  it("create --upgrade without -f keeps the stored settings, and says so", async () => {
    const before = await storedSettings();
    const run = await create("--upgrade");
    assertOk(run);
    assert.match(run.stdout, /^Updated virtual cluster app/);
    assert.match(
      run.stdout,
      /^Settings: kept the stored settings \(-f FILE replaces them, --reset-settings drops them\)$/m,
    );
    assert.equal(await storedSettings(), before);
    assert.equal(parse(before).sync.toHost.endpoints.patches.length, 1);
    assert.ok(parse(before).external.platform, "the dedicated key's platform section is kept");
  });

  it("create --upgrade -f says which settings changed", async () => {
    const changed = settingsWith({ ...OWNER, expression: 'value + " / " + context.vcluster.name' });
    const run = await create("--upgrade", "-f", file("app2.yaml", changed));
    assertOk(run);
    assert.match(run.stdout, /^Settings: changed sync\.toHost\.endpoints\.patches$/m);
  });

  it("--reset-settings drops the stored settings, and goes only with --upgrade and no -f", async () => {
    assertCliFailure(await create("--reset-settings"), /--reset-settings goes with --upgrade and without -f/);
    assertCliFailure(
      await create("--upgrade", "--reset-settings", "-f", join(root, "app.yaml")),
      /--reset-settings goes with --upgrade and without -f/,
    );
    const run = await create("--upgrade", "--reset-settings");
    assertOk(run);
    assert.match(run.stdout, /^Settings: removed sync$/m);
    assert.deepEqual(parse(await storedSettings()), { external: { platform: {} } });
  });

  it("pause stops it and keeps its data; list shows it paused; resume starts it again with its data", async () => {
    const kubeconfig = join(home, "clusters", "team-app", "app", "admin.kubeconfig");
    const virtual = new KubeConfig();
    virtual.loadFromFile(kubeconfig);
    await virtual.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "kept" } } });
    const pid = pidOf("team-app", "app");

    const paused = await cli(["pause", "app"]);
    assertOk(paused);
    assert.match(
      paused.stdout,
      /^Paused virtual cluster app in namespace team-app; resume it with: virtualcluster resume app -n team-app$/m,
    );
    assert.equal(alive(pid), false);
    assert.match((await cli(["list"])).stdout, /^app\s+team-app\s+paused\s/m);
    const instance = await client.send("GET", `${API}/namespaces/p-default/virtualclusterinstances/app`, {
      token: platform.adminKey,
    });
    assert.equal(instance.json().status.online, false, "the platform shows it offline");

    const resumed = await cli(["resume", "app"]);
    assertOk(resumed);
    assert.match(resumed.stdout, /^Resumed virtual cluster app in namespace team-app: https:/);
    assert.match(resumed.stderr, /^Starting virtual cluster app\.\.\.$/m);
    assert.match((await cli(["list"])).stdout, /^app\s+team-app\s+running\s/m);
    const again = new KubeConfig();
    again.loadFromFile(kubeconfig);
    await again.makeApiClient(CoreV1Api).readNamespace({ name: "kept" });
    assert.match((await cli(["resume", "app"])).stdout, /is already running/);
    assertCliFailure(await cli(["pause", "nope"]), /virtual cluster nope not found on this machine/);
  });

  it("a patch failing at run time shows in list; a patch whose path is missing is not applied", async () => {
    const failing = settingsWith({ path: 'metadata.annotations["db-host"]', expression: 'require("fs")' });
    assertOk(await create("--upgrade", "-f", file("failing.yaml", failing)));
    const virtual = new KubeConfig();
    virtual.loadFromFile(join(home, "clusters", "team-app", "app", "admin.kubeconfig"));
    const vcore = virtual.makeApiClient(CoreV1Api);
    // Endpoints sync with their Service.
    const endpoints = async (name: string, annotations: Record<string, string>) => {
      await vcore.createNamespacedService({
        namespace: "default",
        body: { metadata: { name }, spec: { ports: [{ port: 80 }] } },
      });
      await vcore.createNamespacedEndpoints({
        namespace: "default",
        body: { metadata: { name, annotations }, subsets: [{ addresses: [{ ip: "10.0.0.9" }] }] },
      });
    };
    await endpoints("broken", { "db-host": "db.default.svc" });
    await endpoints("plain", { other: "x" });

    // The status file is rewritten every few seconds: wait until it shows the failure.
    let listed: { syncErrors?: number; lastSyncError?: { object: string; message: string } } = {};
    await waitFor(async () => {
      listed = JSON.parse((await cli(["list", "-o", "json"])).stdout).items[0];
      return listed.syncErrors === 1;
    }, "`list` to show the sync error");
    assert.match(listed.lastSyncError?.object ?? "", /broken/);
    assert.match(listed.lastSyncError?.message ?? "", /require/);
    const table = (await cli(["list"])).stdout.split("\n");
    assert.match(table[0], /\sSYNC ERRORS\s+AGE$/);
    assert.match(table[1], /^app\s+team-app\s+running\s.*\s1\s+(\d+[smhd])+$/);
    const wide = (await cli(["list", "-o", "wide"])).stdout;
    assert.match(wide.split("\n")[0], /LAST SYNC ERROR$/);
    assert.ok(wide.includes(listed.lastSyncError?.message ?? "?"), wide);
    // The object without the annotation synced: its patch was not applied.
    let plain: V1Endpoints | undefined;
    await waitFor(async () => {
      plain = await core.readNamespacedEndpoints({ namespace: "team-app", name: "plain-x-default-x-app" });
      return true;
    }, "the object without the annotation on the host");
    assert.equal(plain?.metadata?.annotations?.other, "x");
    assert.equal(plain?.metadata?.annotations?.["db-host"], undefined);
  });

  it("connect without -n or --project; delete without -n removes its context and switches back", async () => {
    mkdirSync(join(root, ".kube"), { recursive: true });
    writeFileSync(kubeconfigFile, readFileSync(host.kubeconfig, "utf8"), { mode: 0o600 });
    const before = parse(readFileSync(kubeconfigFile, "utf8"));
    const connected = await cli(["connect", "app"]);
    assertOk(connected);
    assert.equal(parse(readFileSync(kubeconfigFile, "utf8"))["current-context"], "virtualcluster_app_default");
    assertCliFailure(await cli(["connect", "app", "-n", "elsewhere"]), /app not found in host namespace elsewhere/);

    const deleted = await cli(["delete", "app"]);
    assertOk(deleted);
    assert.match(deleted.stdout, /^Deleted virtual cluster app in namespace team-app/);
    assert.match(
      deleted.stdout,
      new RegExp(
        `^Removed context virtualcluster_app_default from ${kubeconfigFile}; current context is ${before["current-context"]} again$`,
        "m",
      ),
    );
    assert.deepEqual(parse(readFileSync(kubeconfigFile, "utf8")), before);
    assert.equal(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).connectedContexts.length, 0);
    assertCliFailure(await cli(["delete", "app"]), /virtual cluster app not found on this machine/);
  });
});
