// A virtual cluster made by `virtualcluster create` runs as its own host ServiceAccount `vc-<name>` with the
// chart's Role, not with the deployer's credentials (real CLI, platform and host API server processes). With
// createRBAC: false and the key Secret in another namespace the connection fails naming the missing Role; with
// createRBAC: true it connects; the runtime cannot read other namespaces' Secrets; delete removes the Role.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ApiException, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { parse } from "yaml";
import { readRuntimeStatus } from "../src/virtualcluster/runtime-status.ts";
import { AuthClient } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { eventually } from "./support/kubectl.ts";
import { createAccessKey, VIRTUALCLUSTER_SCOPE } from "./support/platform-objects.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const KEYS = "vcp-keys";

describe("the runtime's host identity", () => {
  const root = mkdtempSync(join(tmpdir(), "vc-runtime-identity-"));
  const home = join(root, ".virtualcluster");
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let core: CoreV1Api;
  let rbac: RbacAuthorizationV1Api;
  const created: [string, string][] = [];

  const cli = (args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: home, HOME: root, LOG_LEVEL: "info" };
    for (const name of ["KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];
    return runCli(args, { env });
  };
  const create = async (name: string, namespace: string, createRBAC: boolean) => {
    const file = join(root, `${name}.yaml`);
    writeFileSync(
      file,
      `external:\n  platform:\n    apiKey:\n      secretName: shared-key\n      namespace: ${KEYS}\n      createRBAC: ${createRBAC}\n`,
    );
    const run = await cli(["create", name, "-n", namespace, "-f", file, "--host-kubeconfig", host.kubeconfig]);
    assert.equal(run.code, 0, run.stderr);
    created.push([namespace, name]);
  };
  const status = (namespace: string, name: string) => readRuntimeStatus(join(home, "clusters", namespace, name));

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    const config = new KubeConfig();
    config.loadFromFile(host.kubeconfig);
    core = config.makeApiClient(CoreV1Api);
    rbac = config.makeApiClient(RbacAuthorizationV1Api);
    const client = new AuthClient(platform.url, platform.caPem);
    const key = await createAccessKey(client, platform, "shared", VIRTUALCLUSTER_SCOPE);
    await core.createNamespace({ body: { metadata: { name: KEYS } } });
    await core.createNamespacedSecret({
      namespace: KEYS,
      body: {
        metadata: { name: "shared-key" },
        stringData: {
          accessKey: key,
          host: new URL(platform.url).host,
          certificateAuthorityData: platform.caPem,
        },
      },
    });
    mkdirSync(home, { recursive: true });
  });

  after(async () => {
    for (const [namespace, name] of created) await cli(["delete", name, "-n", namespace]).catch(() => {});
    await Promise.all([platform?.stop(), host?.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  it("with createRBAC: false the connection fails naming the Role the ServiceAccount lacks", async () => {
    await create("norbac", "team-n", false);
    await eventually(() => (status("team-n", "norbac")?.platform?.error ?? "").includes("403"), "the refusal");
    const error = status("team-n", "norbac")?.platform?.error ?? "";
    assert.match(error, /^cannot read Secret vcp-keys\/shared-key as ServiceAccount team-n\/vc-norbac: /);
    assert.match(
      error,
      /missing: the Role vc-norbac-v-team-n-platform-role in vcp-keys \(get on secrets\/shared-key\)/,
    );
    assert.match(error, /createRBAC is false/);
    // The runtime's kubeconfig is the ServiceAccount's token, not the deployer's.
    const runtimeConfig = parse(
      readFileSync(join(home, "clusters", "team-n", "norbac", "runtime-host.kubeconfig"), "utf8"),
    );
    const token: string = runtimeConfig.users[0].user.token;
    const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
    assert.equal(claims.sub, "system:serviceaccount:team-n:vc-norbac");
    const role = await rbac.readNamespacedRole({ namespace: "team-n", name: "vc-norbac" });
    assert.deepEqual(role.rules?.[0].resources, ["services", "endpoints", "configmaps", "secrets"]);
  });

  it("with createRBAC: true it connects through the Secret-reader Role, and reads no other Secret", async () => {
    await create("withrbac", "team-r", true);
    await eventually(() => status("team-r", "withrbac")?.platform?.connected === true, "the platform connection");
    await rbac.readNamespacedRole({ namespace: KEYS, name: "vc-withrbac-v-team-r-platform-role" });
    // The same token, used directly: the key Secret yes, the other namespace's other Secrets no.
    const runtimeConfig = new KubeConfig();
    runtimeConfig.loadFromFile(join(home, "clusters", "team-r", "withrbac", "runtime-host.kubeconfig"));
    const asRuntime = runtimeConfig.makeApiClient(CoreV1Api);
    await asRuntime.readNamespacedSecret({ namespace: KEYS, name: "shared-key" });
    await assert.rejects(
      () => asRuntime.listNamespacedSecret({ namespace: KEYS }),
      (error) => error instanceof ApiException && error.code === 403,
    );
    await assert.rejects(
      () => asRuntime.listNamespacedSecret({ namespace: "team-n" }),
      (error) => error instanceof ApiException && error.code === 403,
    );
  });

  it("delete removes the runtime's Role and RoleBinding", async () => {
    const run = await cli(["delete", "withrbac", "-n", "team-r"]);
    assert.equal(run.code, 0, run.stderr);
    created.splice(
      created.findIndex(([, name]) => name === "withrbac"),
      1,
    );
    await assert.rejects(
      () => rbac.readNamespacedRole({ namespace: "team-r", name: "vc-withrbac" }),
      (error) => error instanceof ApiException && error.code === 404,
    );
    await assert.rejects(
      () => rbac.readNamespacedRoleBinding({ namespace: "team-r", name: "vc-withrbac" }),
      (error) => error instanceof ApiException && error.code === 404,
    );
  });
});
