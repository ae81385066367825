// `virtualcluster create | delete | list | connect` as a user runs them: the real CLI process against a real platform
// process and a real host API server process, with the client's state in temporary homes. Failures must be one line
// on stderr with exit code 1, and a failed create must leave nothing behind.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { parse } from "yaml";
import { API, AuthClient } from "./support/auth-client.ts";
import { processAlive as alive, assertCliFailure as assertFailure, type CliRun, runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const root = mkdtempSync(join(tmpdir(), "vc-cli-create-"));
let homes = 0;

type Run = CliRun;

/** A user: VIRTUALCLUSTER_HOME and HOME of its own, no KUBECONFIG. */
function newUser() {
  const dir = join(root, `user-${homes++}`);
  mkdirSync(dir, { recursive: true });
  return { home: join(dir, ".virtualcluster"), dir };
}
type User = ReturnType<typeof newUser>;

function cli(user: User, args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: user.home, HOME: user.dir, LOG_LEVEL: "info" };
  for (const name of ["KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];
  return runCli(args, { env });
}

function assertOk(run: Run): void {
  assert.equal(run.code, 0, run.stderr);
  assert.equal(`${run.stdout}${run.stderr}`.includes("\u001b"), false, "no escapes when not on a terminal");
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const mode = (path: string) => statSync(path).mode & 0o777;
const clusterDir = (user: User, namespace: string, name: string) => join(user.home, "clusters", namespace, name);
const decode = (data: Record<string, string> | undefined, key: string) =>
  Buffer.from(data?.[key] ?? "", "base64").toString("utf8");

/** GET <server>/api/v1/namespaces with a kubeconfig's token and CA: the status code. */
function getNamespaces(kubeconfig: string): Promise<number> {
  const config = parse(kubeconfig);
  const cluster = config.clusters[0].cluster;
  const token = config.users[0].user.token;
  return new Promise((resolve, reject) => {
    request(
      new URL("/api/v1/namespaces", cluster.server),
      {
        ca: Buffer.from(cluster["certificate-authority-data"], "base64").toString("utf8"),
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    )
      .on("error", reject)
      .end();
  });
}

const SETTINGS_WITH_PATCH = `# team web
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["synced-by"]
          expression: '"virtual cluster " + context.vcluster.name'
`;

describe("virtualcluster create, delete, list and connect", () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let core: CoreV1Api;
  let client: AuthClient;
  let caFile: string;
  const admin = newUser();
  const local = newUser();
  const file = (name: string, text: string) => {
    const path = join(root, name);
    writeFileSync(path, text);
    return path;
  };
  const namespaceExists = async (name: string) => {
    try {
      await core.readNamespace({ name });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  };
  const secret = (namespace: string, name: string) =>
    core.readNamespacedSecret({ namespace, name }).catch((error) => {
      if (error.code === 404) return undefined;
      throw error;
    });
  const platformGet = (path: string) => client.send("GET", `${API}/${path}`, { token: platform.adminKey });
  const create = (user: User, name: string, namespace: string, ...args: string[]) =>
    cli(user, ["create", name, "-n", namespace, "--host-kubeconfig", host.kubeconfig, ...args]);

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    caFile = join(platform.dataDir, "pki", "ca.crt");
    const config = new KubeConfig();
    config.loadFromFile(host.kubeconfig);
    core = config.makeApiClient(CoreV1Api);
    client = new AuthClient(platform.url, platform.caPem);
    assertOk(
      await cli(admin, ["platform", "login", platform.url, "--ca-file", caFile, "--access-key", platform.adminKey]),
    );
  });

  after(async () => {
    // Stop any virtual cluster a failed test left running.
    for (const user of [admin, local]) {
      for (const [namespace, name] of [
        ["team-web", "web"],
        ["team-local", "solo"],
        ["team-busy", "busy"],
      ]) {
        const pid = join(clusterDir(user, namespace, name), "runtime.pid");
        if (existsSync(pid)) {
          try {
            process.kill(Number(readFileSync(pid, "utf8")), "SIGTERM");
          } catch {
            // not running
          }
        }
      }
    }
    client?.agent.destroy();
    await Promise.all([platform?.stop(), host?.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  it("create with a missing settings file is one line and touches nothing", async () => {
    assertFailure(
      await create(admin, "x", "never-a", "-f", join(root, "nope.yaml")),
      /nope\.yaml: cannot read the settings file \(ENOENT\)/,
    );
    assert.equal(await namespaceExists("never-a"), false);
  });

  it("create reports invalid settings with their field paths, all in one line, and touches nothing", async () => {
    const bad = file(
      "bad.yaml",
      'external:\n  platform:\n    apiKey:\n      createRBAC: "yes"\nsync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: "value +"\n',
    );
    const run = await create(admin, "x", "never-b", "-f", bad);
    assertFailure(run, /bad\.yaml: invalid settings: /);
    assert.match(run.stderr, /external\.platform\.apiKey\.createRBAC: Invalid value: "yes": must be a boolean/);
    assert.match(run.stderr, /sync\.toHost\.endpoints\.patches\[0\]\.expression: syntax error/);
    assert.equal(await namespaceExists("never-b"), false);
  });

  it("create and delete refuse bad names, and create needs a host it can reach", async () => {
    assertFailure(await create(admin, "Web", "team-web"), /virtual cluster name "Web" is invalid/);
    assertFailure(await cli(admin, ["delete", "web", "-n", "team_web"]), /namespace "team_web" is invalid/);
    const port = await closedPort();
    const unreachable = file(
      "unreachable.kubeconfig",
      readFileSync(host.kubeconfig, "utf8").replace(new URL(host.url).host, `127.0.0.1:${port}`),
    );
    assertFailure(
      await cli(admin, ["create", "x", "-n", "never-c", "--host-kubeconfig", unreachable]),
      new RegExp(`cannot connect to the host cluster at https://127\\.0\\.0\\.1:${port}: connection refused`),
    );
    assertFailure(
      await cli(admin, ["create", "x", "-n", "never-c", "--host-kubeconfig", join(root, "missing.kubeconfig")]),
      /--host-kubeconfig .*missing\.kubeconfig: no such file/,
    );
    assertFailure(await cli(newUser(), ["create", "x", "-n", "never-c"]), /no host cluster: pass --host-kubeconfig/);
  });

  it("a wrong platform key or an unreachable platform fails create and connect in one line, touching nothing", async () => {
    const wrongKey = newUser();
    const unreachable = newUser();
    const port = await closedPort();
    const caData = Buffer.from(platform.caPem).toString("base64");
    for (const [user, login] of [
      [
        wrongKey,
        { host: platform.url, accessKey: "wrong-key-0123456789abcdefghijklmnop", certificateAuthorityData: caData },
      ],
      [unreachable, { host: `https://127.0.0.1:${port}`, accessKey: platform.adminKey }],
    ] as const) {
      mkdirSync(user.home, { recursive: true });
      writeFileSync(join(user.home, "config.json"), JSON.stringify({ platform: login }), { mode: 0o600 });
    }
    const rejected = /the platform at https:\/\/127\.0\.0\.1:\d+ rejected the stored access key .*platform login/;
    assertFailure(await create(wrongKey, "x", "never-d"), rejected);
    assertFailure(await cli(wrongKey, ["connect", "x"]), rejected);
    const refused = new RegExp(`cannot connect to 127\\.0\\.0\\.1:${port}: connection refused`);
    assertFailure(await create(unreachable, "x", "never-d"), refused);
    assertFailure(await cli(unreachable, ["connect", "x"]), refused);
    assert.equal(await namespaceExists("never-d"), false);
    assert.equal(existsSync(join(wrongKey.home, "clusters")), false);
    assertFailure(
      await cli(local, ["connect", "x"]),
      /not logged in to a platform: run `virtualcluster platform login/,
    );
  });

  describe("a virtual cluster created while logged in (dedicated key)", () => {
    let url: string;
    let pid: number;
    let keyName: string;

    it("create registers it, writes the key Secret and the settings, runs it and says how to use it", async () => {
      const run = await create(admin, "web", "team-web");
      assertOk(run);
      const match = /Created virtual cluster web in namespace team-web: (https:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout);
      assert.ok(match, run.stdout);
      url = match[1];
      assert.match(run.stdout, /Connected to the platform 127\.0\.0\.1:\d+ as p-default\/web/);
      assert.match(run.stdout, /virtualcluster connect web --project default/);

      const instance = await platformGet("namespaces/p-default/virtualclusterinstances/web");
      assert.equal(instance.status, 200, instance.body);
      assert.equal(instance.json().spec.external, true);
      assert.deepEqual(instance.json().spec.clusterRef, { namespace: "team-web", virtualCluster: "web" });
      assert.equal(instance.json().status.online, true);

      const keySecret = await secret("team-web", "virtualcluster-platform-api-key");
      assert.ok(keySecret);
      assert.equal(decode(keySecret.data, "host"), new URL(platform.url).host);
      assert.equal(decode(keySecret.data, "project"), "default");
      assert.equal(decode(keySecret.data, "name"), "web");
      assert.equal(decode(keySecret.data, "insecure"), "false");
      assert.equal(decode(keySecret.data, "certificateAuthorityData"), Buffer.from(platform.caPem).toString("base64"));
      const state = JSON.parse(readFileSync(join(clusterDir(admin, "team-web", "web"), "cluster.json"), "utf8"));
      keyName = state.registration.accessKey;
      const key = await platformGet(`ownedaccesskeys/${keyName}`);
      assert.equal(key.status, 200, key.body);
      assert.deepEqual(key.json().spec.scope.roles, [{ role: "virtualcluster", projects: ["default"] }]);

      const settings = await secret("team-web", "vc-config-web");
      assert.deepEqual(parse(decode(settings?.data, "config.yaml")), { external: { platform: {} } });
      await core.readNamespacedServiceAccount({ namespace: "team-web", name: "vc-web" });

      const dir = clusterDir(admin, "team-web", "web");
      assert.equal(mode(dir), 0o700);
      for (const name of ["cluster.json", "host.kubeconfig", "virtualcluster.yaml", "admin.kubeconfig"]) {
        assert.equal(mode(join(dir, name)), 0o600, name);
      }
      pid = Number(readFileSync(join(dir, "runtime.pid"), "utf8"));
      assert.ok(alive(pid));
    });

    it("list shows it running and connected; -o json gives the details", async () => {
      const table = await cli(admin, ["list"]);
      assertOk(table);
      const lines = table.stdout.trimEnd().split("\n");
      assert.match(lines[0], /^NAME\s+NAMESPACE\s+STATUS\s+URL\s+PLATFORM\s+SYNC ERRORS\s+AGE$/);
      assert.match(
        lines[1],
        new RegExp(`^web\\s+team-web\\s+running\\s+${url}\\s+connected \\(p-default/web\\)\\s+0\\s+\\d+s$`),
      );
      const json = await cli(admin, ["list", "-o", "json"]);
      assertOk(json);
      const [item] = JSON.parse(json.stdout).items;
      assert.equal(item.status, "running");
      assert.equal(item.pid, pid);
      assert.equal(item.platform.connected, true);
      assert.deepEqual(item.platform.instance, { namespace: "p-default", name: "web" });
    });

    it("create of an existing virtual cluster without --upgrade is an error", async () => {
      assertFailure(
        await create(admin, "web", "team-web"),
        /virtual cluster web already exists in namespace team-web: add --upgrade/,
      );
      assert.ok(alive(pid), "the running one is left alone");
    });

    it("create --upgrade checks the new settings first, then stores them and restarts on the same URL and key", async () => {
      const invalid = file("invalid-upgrade.yaml", "sync:\n  toHost:\n    services:\n      enabled: maybe\n");
      assertFailure(
        await create(admin, "web", "team-web", "-f", invalid, "--upgrade"),
        /sync\.toHost\.services\.enabled: Invalid value: "maybe"/,
      );
      assert.ok(alive(pid), "a rejected upgrade does not stop it");

      const run = await create(admin, "web", "team-web", "-f", file("web.yaml", SETTINGS_WITH_PATCH), "--upgrade");
      assertOk(run);
      assert.match(run.stdout, new RegExp(`Updated virtual cluster web in namespace team-web: ${url}\\n`));
      const newPid = Number(readFileSync(join(clusterDir(admin, "team-web", "web"), "runtime.pid"), "utf8"));
      assert.notEqual(newPid, pid);
      assert.equal(alive(pid), false, "the old runtime stopped");
      pid = newPid;
      const stored = decode((await secret("team-web", "vc-config-web"))?.data, "config.yaml");
      assert.match(stored, /^# team web\n/, "the user's text, comments included");
      assert.equal(parse(stored).external.platform && Object.keys(parse(stored).external.platform).length, 0);
      assert.equal(parse(stored).sync.toHost.endpoints.patches.length, 1);
      const state = JSON.parse(readFileSync(join(clusterDir(admin, "team-web", "web"), "cluster.json"), "utf8"));
      assert.equal(state.registration.accessKey, keyName, "the dedicated key is kept");
    });

    it("a name another namespace's virtual cluster holds on the platform is an error; the new namespace goes again", async () => {
      assertFailure(
        await create(admin, "web", "team-other"),
        /project default already has a virtual cluster "web" \(namespace team-web\)/,
      );
      const left = await core.readNamespace({ name: "team-other" }).catch(() => undefined);
      assert.ok(left === undefined || left.status?.phase === "Terminating", "the namespace is deleted");
      assert.equal(existsSync(clusterDir(admin, "team-other", "web")), false);
    });

    it("connect reports unknown virtual clusters and projects in one line", async () => {
      assertFailure(
        await cli(admin, ["connect", "nope"]),
        /virtual cluster nope not found on the platform https:\/\/127\.0\.0\.1:\d+/,
      );
      assertFailure(
        await cli(admin, ["connect", "web", "--project", "nope"]),
        /virtual cluster web not found in project nope/,
      );
    });

    it("connect --print prints a working kubeconfig and changes no file", async () => {
      const run = await cli(admin, ["connect", "web", "--print"]);
      assertOk(run);
      assert.equal(parse(run.stdout)["current-context"], "virtualcluster_web_default");
      assert.equal(await getNamespaces(run.stdout), 200);
      assert.equal(existsSync(join(admin.dir, ".kube", "config")), false);
    });

    it("connect merges a context into the kubeconfig (0600), keeps other entries and switches to it", async () => {
      const kubeconfig = join(admin.dir, ".kube", "config");
      mkdirSync(join(admin.dir, ".kube"));
      writeFileSync(kubeconfig, readFileSync(host.kubeconfig, "utf8"), { mode: 0o644 });
      const run = await cli(admin, ["connect", "web", "--project", "default"]);
      assertOk(run);
      assert.match(run.stdout, /Switched to context "virtualcluster_web_default" .* in .*\.kube\/config/);
      assert.equal(mode(kubeconfig), 0o600);
      const merged = parse(readFileSync(kubeconfig, "utf8"));
      assert.equal(merged["current-context"], "virtualcluster_web_default");
      assert.deepEqual(merged.contexts.map((context: { name: string }) => context.name).sort(), [
        "virtualcluster-apiserver",
        "virtualcluster_web_default",
      ]);
      const only = {
        ...merged,
        contexts: merged.contexts.filter((c: { name: string }) => c.name === "virtualcluster_web_default"),
        clusters: merged.clusters.filter((c: { name: string }) => c.name === "virtualcluster_web_default"),
        users: merged.users.filter((u: { name: string }) => u.name === "virtualcluster_web_default"),
      };
      assert.equal(await getNamespaces(JSON.stringify(only)), 200);
    });

    it("delete stops it and removes it from the platform, the host and this machine", async () => {
      assertFailure(
        await cli(admin, ["delete", "nope", "-n", "team-web"]),
        /virtual cluster nope not found in namespace team-web on this machine/,
      );
      assertFailure(
        await cli(admin, ["delete", "nope", "-n", "team-web", "--host-kubeconfig", host.kubeconfig]),
        /virtual cluster nope not found in namespace team-web on the host cluster/,
      );
      // After connect the current context is the virtual cluster; delete must still use the host create used.
      const run = await cli(admin, ["delete", "web", "-n", "team-web"]);
      assertOk(run);
      assert.match(
        run.stdout,
        /Deleted virtual cluster web in namespace team-web \(stopped it, .*removed it from the platform\)/,
      );
      assert.equal(alive(pid), false);
      assert.equal((await platformGet("namespaces/p-default/virtualclusterinstances/web")).status, 404);
      assert.equal((await platformGet(`ownedaccesskeys/${keyName}`)).status, 404);
      for (const name of ["virtualcluster-platform-api-key", "vc-config-web"]) {
        assert.equal(await secret("team-web", name), undefined, name);
      }
      await assert.rejects(core.readNamespacedServiceAccount({ namespace: "team-web", name: "vc-web" }));
      assert.equal(existsSync(clusterDir(admin, "team-web", "web")), false);
      const list = await cli(admin, ["list"]);
      assertOk(list);
      assert.equal(list.stdout, "");
      assert.match(list.stderr, /No virtual clusters found/);
    });
  });

  it("a virtual cluster that cannot start fails create with the runtime's reason; --upgrade starts it again", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const failed = await create(local, "busy", "team-busy", "--port", String(taken));
      // The progress lines create prints while it waits (every 10 s on a slow machine) come before the one error line.
      failed.stderr = failed.stderr.replace(/^Starting virtual cluster busy\.\.\.( \(\d+s\))?\n/gm, "");
      assertFailure(
        failed,
        new RegExp(
          `the virtual cluster exited while starting: listen EADDRINUSE.*127\\.0\\.0\\.1:${taken} \\(log: .*runtime\\.log\\)`,
        ),
      );
    } finally {
      blocker.close();
    }
    const list = await cli(local, ["list"]);
    assert.match(list.stdout, new RegExp(`busy\\s+team-busy\\s+stopped\\s+https://127\\.0\\.0\\.1:${taken}\\s`));
    assertFailure(await create(local, "busy", "team-busy"), /already exists .*--upgrade/);
    assertOk(await create(local, "busy", "team-busy", "--upgrade"));
    assert.match((await cli(local, ["list"])).stdout, /busy\s+team-busy\s+running/);
    assertOk(await cli(local, ["delete", "busy", "-n", "team-busy"]));
  });

  it("without a login a virtual cluster runs without the platform, and --project needs one", async () => {
    assertFailure(await create(local, "solo", "team-local", "--project", "p"), /--project needs a platform/);
    const run = await create(local, "solo", "team-local");
    assertOk(run);
    assert.doesNotMatch(run.stdout, /platform/i);
    assert.equal(await secret("team-local", "virtualcluster-platform-api-key"), undefined);
    const list = await cli(local, ["list"]);
    assert.match(list.stdout, /solo\s+team-local\s+running\s+https:\S+\s+-\s/);
    assertOk(await cli(local, ["delete", "solo", "-n", "team-local"]));
    assert.equal(await secret("team-local", "vc-config-solo"), undefined);
  });
});
