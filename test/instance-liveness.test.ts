// Over real processes (platform, host cluster API server, virtual cluster runtime): an instance whose runtime was
// killed with SIGKILL is marked offline once heartbeats stop for the platform's bound, and online again when a
// runtime reports; the runtime names a disabled key with the platform's own message and a stopped platform as
// unreachable.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { createAccessKey, readInstance, VIRTUALCLUSTER_SCOPE } from "./support/platform-objects.ts";
import { type PlatformProcess, refusedStart, startPlatformProcess } from "./support/platform-process.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { waitFor } from "./support/wait-for.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";
const HEARTBEAT_SECONDS = 1;
const OFFLINE_AFTER_SECONDS = 3;

describe("instance liveness and connection errors", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let hostctl: Kubectl;
  let client: AuthClient;
  const runtimes: RuntimeProcess[] = [];

  const createKey = (name: string) => createAccessKey(client, platform, name, VIRTUALCLUSTER_SCOPE);
  const setUp = async (namespace: string, key: string) => {
    await hostctl.ok(
      ["apply", "-f", "-"],
      JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
    );
    await hostctl.ok(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "virtualcluster-platform-api-key", namespace },
        stringData: { accessKey: key, host: new URL(platform.url).host, certificateAuthorityData: platform.caPem },
      }),
    );
  };
  const run = async (name: string, namespace: string, heartbeatSeconds?: null) => {
    const runtime = await startRuntimeProcess({
      name,
      namespace,
      settings: "external:\n  platform: {}\n",
      hostKubeconfig: host.kubeconfig,
      heartbeatSeconds,
    });
    runtimes.push(runtime);
    return runtime;
  };
  const instance = (name: string) => readInstance(client, platform, name);

  before(async () => {
    [platform, host] = await Promise.all([
      startPlatformProcess({
        extraArgs: [
          "--instance-heartbeat-seconds",
          String(HEARTBEAT_SECONDS),
          "--instance-offline-after-seconds",
          String(OFFLINE_AFTER_SECONDS),
        ],
      }),
      startClusterApiServerProcess(),
    ]);
    hostctl = new Kubectl(host.kubeconfig);
    client = new AuthClient(platform.url, platform.caPem);
  });

  after(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.stop()));
    await Promise.all([platform?.stop(), host?.stop()]);
  });

  it("marks an instance offline after a kill -9 of its runtime, and online again when it reports", async () => {
    await setUp("live", await createKey("live-key"));
    const first = await run("live", "live");
    await waitFor(async () => (await instance("live"))?.status?.online === true, "the instance online");
    await waitFor(
      async () =>
        (await instance("live"))?.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === "Online" && c.status === "True",
        ),
      "the Online condition",
    );
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;
    await waitFor(async () => (await instance("live"))?.status?.online === false, "the instance offline");
    const offline = await instance("live");
    assert.equal(offline.status.phase, "Failed");
    assert.equal(offline.status.reason, "HeartbeatTimeout");
    const condition = offline.status.conditions.find((c: { type: string }) => c.type === "Online");
    assert.equal(condition.status, "False");
    assert.equal(condition.reason, "HeartbeatTimeout");
    assert.match(condition.message, new RegExp(`offline after ${OFFLINE_AFTER_SECONDS} s without one`));
    // kubectl's table (what `platform get` prints) shows it too.
    const table = await new Kubectl(platform.kubeconfig).ok(["get", "virtualclusterinstances", "-n", "p-default"]);
    assert.match(table, /HEARTBEAT/);
    assert.match(table, /live\s+default\s+Failed\s+false/);

    await run("live", "live");
    await waitFor(async () => {
      const status = (await instance("live"))?.status;
      return (
        status?.online === true &&
        status.phase === "Ready" &&
        status.conditions?.some((c: { type: string; status: string }) => c.type === "Online" && c.status === "True")
      );
    }, "the instance online again");
  });

  it("platform start refuses an offline bound below twice the heartbeat, in one line naming the heartbeat", async () => {
    const refusals = [
      { args: ["--instance-offline-after-seconds", "30"], heartbeat: "30 s \\(default\\)" },
      {
        args: ["--instance-heartbeat-seconds", "10", "--instance-offline-after-seconds", "19"],
        heartbeat: "10 s \\(--instance-heartbeat-seconds\\)",
      },
    ];
    for (const { args, heartbeat } of refusals) {
      assert.match(
        await refusedStart({ extraArgs: args }),
        new RegExp(
          `^error: --instance-offline-after-seconds \\d+ is below twice the instance heartbeat of ${heartbeat}: instances would flap`,
        ),
      );
    }
  });

  it("a runtime without --heartbeat-seconds reports at the heartbeat the platform states", async () => {
    await setUp("follow", await createKey("follow-key"));
    const vc = await run("follow", "follow", null);
    await waitFor(async () => (await vc.status()).platform?.heartbeatSeconds === HEARTBEAT_SECONDS, "the heartbeat");
    const onlineCondition = async () =>
      (await instance("follow"))?.status?.conditions?.find((c: { type: string }) => c.type === "Online");
    await waitFor(async () => (await onlineCondition())?.status === "True", "the instance online");
    const since = (await onlineCondition()).lastTransitionTime;
    // Two offline bounds pass with the instance online throughout: it reports often enough.
    let offline = false;
    await waitFor(async () => {
      const status = (await instance("follow"))?.status;
      if (status?.online !== true) offline = true;
      return Date.parse(status?.lastHeartbeatTime) - Date.parse(since) >= 2 * OFFLINE_AFTER_SECONDS * 1000;
    }, "heartbeats across two offline bounds");
    assert.equal(offline, false, "the instance went offline between heartbeats");
    const online = await onlineCondition();
    assert.equal(online?.status, "True");
    assert.equal(online.lastTransitionTime, since, "no transition since it came online");
  });

  it("says what the platform said about a disabled key, and that a stopped platform is unreachable", async () => {
    await setUp("errs", await createKey("errs-key"));
    const vc = await run("errs", "errs");
    await waitFor(async () => (await vc.status()).platform?.connected === true, "the connection");
    const disabled = await client.send("PATCH", `${API}/ownedaccesskeys/errs-key`, {
      token: platform.adminKey,
      contentType: "application/merge-patch+json",
      body: { spec: { disabled: true } },
    });
    assert.equal(disabled.status, 200, disabled.body);
    await waitFor(async () => (await vc.status()).platform?.connected === false, "the key to stop working");
    const error = (await vc.status()).platform?.error ?? "";
    assert.match(error, /rejected the access key from Secret errs\/virtualcluster-platform-api-key: /);
    assert.doesNotMatch(error, /HTTP-Code/);
    assert.match(error, /disabled/i);

    await platform.stop();
    await waitFor(async () => /unreachable/.test((await vc.status()).platform?.error ?? ""), "the unreachable error");
    assert.match(
      (await vc.status()).platform?.error ?? "",
      /^cannot reach the platform at \S+: platform unreachable \(ECONNREFUSED\)$/,
    );
  });
});
