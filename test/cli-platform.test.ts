// `virtualcluster platform ...` as a user runs it: the real CLI process against a real platform process, with the
// client config in a temporary VIRTUALCLUSTER_HOME. Failures must be one line on stderr with exit code 1.

import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { request } from "node:https";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { API, AuthClient } from "./support/auth-client.ts";
import { assertCliFailure as assertFailure, type CliRun, runCli } from "./support/cli-run.ts";
import { send } from "./support/https-json.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const root = mkdtempSync(join(tmpdir(), "vc-cli-platform-"));
let homes = 0;
const newHome = () => join(root, `home-${homes++}`);

type Run = CliRun;

function cli(home: string, args: string[], input?: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: home };
  delete env.NO_COLOR;
  return runCli(args, { env, input });
}

function assertOk(run: Run): void {
  assert.equal(run.code, 0, run.stderr);
  // Not a terminal: no colour or spinner escapes anywhere.
  assert.equal(`${run.stdout}${run.stderr}`.includes("\u001b"), false);
}

const configOf = (home: string) => JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
const mode = (path: string) => statSync(path).mode & 0o777;

/** The Table the server prints for a resource (what kubectl shows). */
function serverTable(platform: PlatformProcess, plural: string): Promise<{ columnDefinitions: [] }> {
  const url = `${platform.url}/kubernetes/management${API}/${plural}`;
  const headers = {
    authorization: `Bearer ${platform.adminKey}`,
    accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
  };
  return new Promise((resolve, reject) => {
    request(url, { headers, ca: platform.caPem }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve(JSON.parse(body)));
    })
      .on("error", reject)
      .end();
  });
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("virtualcluster platform commands against a real platform", () => {
  let platform: PlatformProcess;
  let caFile: string;
  let password: string;
  const admin = newHome();
  const passwordHome = newHome();

  const login = (home: string, key: string) =>
    cli(home, ["platform", "login", platform.url, "--ca-file", caFile, "--access-key", key]);

  before(async () => {
    platform = await startPlatformProcess();
    caFile = join(platform.dataDir, "pki", "ca.crt");
    password = readFileSync(join(platform.dataDir, "admin-password"), "utf8").trim();
  });
  after(async () => {
    await platform?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("login with a wrong key is one line, exit 1, stores nothing and never echoes the key", async () => {
    const home = newHome();
    const wrong = "wrong-key-0123456789abcdefghijklmnop";
    const run = await login(home, wrong);
    assertFailure(run, /127\.0\.0\.1:\d+ refused the access key: Access key not found$/);
    assert.equal(run.stderr.includes(wrong), false);
    assert.equal(existsSync(join(home, "config.json")), false);
  });

  it("login refuses plain http, bad URLs, unreachable hosts and unverified certificates in one line each", async () => {
    const home = newHome();
    const port = new URL(platform.url).port;
    assertFailure(
      await cli(home, ["platform", "login", `http://127.0.0.1:${port}`, "--access-key", platform.adminKey]),
      /refusing plain http .*--allow-http/,
    );
    assertFailure(await cli(home, ["platform", "login", "https://a b", "--access-key", "k"]), /not a valid URL/);
    assertFailure(
      await cli(home, ["platform", "login", `127.0.0.1:${await freePort()}`, "--access-key", "k"]),
      /cannot connect to 127\.0\.0\.1:\d+: connection refused/,
    );
    assertFailure(
      await cli(home, ["platform", "login", platform.url, "--access-key", platform.adminKey]),
      /cannot verify the certificate of 127\.0\.0\.1:\d+ .*--ca-file/,
    );
    assertFailure(
      await cli(home, ["platform", "login", platform.url, "--ca-file", caFile]),
      /no single sign-on connector: log in with --username or --access-key/,
    );
    assertFailure(
      await cli(home, ["platform", "login", platform.url, "--insecure", "--ca-file", caFile, "--access-key", "k"]),
      /--insecure.*cannot be used with.*--ca-file/,
    );
    assert.equal(existsSync(join(home, "config.json")), false);
  });

  it("login to something that is not the platform says so (and --allow-http is loud about plain http)", async () => {
    const server = createServer((_, res) => res.writeHead(404, { "content-type": "text/html" }).end("<h1>nope</h1>"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const run = await cli(newHome(), [
        "platform",
        "login",
        `http://127.0.0.1:${port}`,
        "--allow-http",
        "--access-key",
        "k",
      ]);
      assert.equal(run.code, 1);
      const lines = run.stderr.trimEnd().split("\n");
      assert.deepEqual(lines, [
        "Warning: plain http: the access key travels unencrypted",
        `error: 127.0.0.1:${port} answered 404 Not Found, which is not the platform's API (check the URL)`,
      ]);
    } finally {
      server.close();
    }
  });

  it("login with a key stores host, key and CA in a 0600 file (0700 directory) and says who you are", async () => {
    const run = await cli(admin, [
      "platform",
      "login",
      `${platform.url}/`,
      "--ca-file",
      caFile,
      "--access-key",
      platform.adminKey,
    ]);
    assertOk(run);
    assert.equal(run.stdout, `Logged in to ${platform.url} as user admin (Admin)\n`);
    assert.deepEqual(configOf(admin), {
      platform: {
        host: platform.url,
        accessKey: platform.adminKey,
        certificateAuthorityData: Buffer.from(platform.caPem).toString("base64"),
      },
    });
    assert.equal(mode(join(admin, "config.json")), 0o600);
    assert.equal(mode(admin), 0o700);
    chmodSync(join(admin, "config.json"), 0o644);
    assertOk(await login(admin, platform.adminKey));
    assert.equal(mode(join(admin, "config.json")), 0o600);
  });

  it("get users prints the server's Table columns; -o json and -o yaml print the list without managedFields", async () => {
    const columns = (await serverTable(platform, "users")).columnDefinitions
      .filter((c: { priority: number }) => c.priority === 0)
      .map((c: { name: string }) => c.name.toUpperCase());
    const run = await cli(admin, ["platform", "get", "users"]);
    assertOk(run);
    const [header, row] = run.stdout.trimEnd().split("\n");
    assert.deepEqual(header.split(/\s{3,}/), columns);
    assert.match(header, /^NAME\s+USERNAME\s+EMAIL\s+DISABLED\s+AGE$/);
    assert.match(row, /^admin\s+admin\s+false\s+\d+s$/);

    const json = await cli(admin, ["platform", "list", "users", "-o", "json"]);
    assertOk(json);
    const list = JSON.parse(json.stdout);
    assert.equal(list.kind, "UserList");
    assert.deepEqual(
      list.items.map((u: { metadata: { name: string } }) => u.metadata.name),
      ["admin"],
    );
    assert.equal(list.items[0].metadata.managedFields, undefined);
    const yaml = parse((await cli(admin, ["platform", "get", "user", "admin", "-o", "yaml"])).stdout);
    assert.equal(yaml.kind, "User");
    assert.equal(yaml.metadata.name, "admin");
  });

  it("get follows the server's column choice: -o wide adds priority columns", async () => {
    const plain = (await cli(admin, ["platform", "get", "accesskeys"])).stdout.split("\n")[0];
    const wide = (await cli(admin, ["platform", "get", "accesskeys", "-o", "wide"])).stdout.split("\n")[0];
    assert.match(plain, /^NAME\s+OWNER\s+TYPE\s/);
    assert.equal(plain.includes("DISPLAY NAME"), false);
    assert.match(wide, /DISPLAY NAME/);
  });

  it("get of an unknown resource or object is one line, exit 1", async () => {
    assertFailure(await cli(admin, ["platform", "get", "bogus"]), /unknown resource "bogus": use one of users, teams/);
    assertFailure(
      await cli(admin, ["platform", "get", "user", "nobody"]),
      /users\.management\.platform\.sh "nobody" not found/,
    );
    assertFailure(await cli(admin, ["platform", "get", "users", "-o", "xml"]), /argument 'xml' is invalid/);
    assertFailure(await cli(newHome(), ["platform", "get", "users"]), /not logged in to a platform/);
  });

  it("create accesskey prints only the key, once, and the key then works", async () => {
    const run = await cli(admin, ["platform", "create", "accesskey", "ci-key", "--expire-after", "1h"]);
    assertOk(run);
    assert.match(run.stdout, /^[A-Za-z0-9_-]{32,}\n$/);
    assert.equal(run.stderr, "");
    const key = run.stdout.trim();

    const other = newHome();
    const again = await login(other, key);
    assertOk(again);
    assert.match(again.stdout, /as user admin/);

    const shown = await cli(admin, ["platform", "get", "accesskey", "ci-key", "-o", "json"]);
    assertOk(shown);
    assert.equal(shown.stdout.includes(key), false);
    const object = JSON.parse(shown.stdout);
    assert.equal(object.spec.ttl, 3600);
    assert.equal(object.spec.type, "User");
    assert.equal(object.spec.user, "admin");
    assertFailure(await cli(admin, ["platform", "create", "accesskey", "ci-key"]), /"ci-key" already exists/);
    // -o yaml: the created object with its key, as kubectl prints objects (no managedFields).
    const yaml = await cli(admin, ["platform", "create", "accesskey", "yaml-key", "-o", "yaml"]);
    assertOk(yaml);
    const created = parse(yaml.stdout);
    assert.equal(created.metadata.name, "yaml-key");
    assert.match(created.spec.key, /^[A-Za-z0-9_-]{32,}$/);
    assert.equal(yaml.stdout.includes("managedFields"), false);
  });

  it("create accesskey --virtualcluster-role scopes the key to the virtualcluster role; -o json shows the key", async () => {
    const run = await cli(admin, [
      "platform",
      "create",
      "accesskey",
      "vc-key",
      "--virtualcluster-role",
      "--project",
      "default",
      "--display-name",
      "Shared VC key",
      "-o",
      "json",
    ]);
    assertOk(run);
    const created = JSON.parse(run.stdout);
    assert.match(created.spec.key, /^[A-Za-z0-9_-]{32,}$/);
    assert.deepEqual(created.spec.scope, { roles: [{ role: "virtualcluster", projects: ["default"] }] });
    assert.equal(created.spec.displayName, "Shared VC key");
    assertFailure(
      await cli(admin, ["platform", "create", "accesskey", "x", "--project", "default"]),
      /--project limits a --virtualcluster-role key/,
    );
    assertFailure(
      await cli(admin, ["platform", "create", "accesskey", "x", "--expire-after", "10"]),
      /needs? a unit|not a duration/,
    );
  });

  it("password login reads the password from standard input and stores a Login key; a wrong one is one line", async () => {
    assertFailure(
      await cli(
        newHome(),
        ["platform", "login", platform.url, "--ca-file", caFile, "--username", "admin", "--password-stdin"],
        "nope\n",
      ),
      /Invalid username or password/,
    );
    const run = await cli(
      passwordHome,
      ["platform", "login", platform.url, "--ca-file", caFile, "--username", "admin"],
      `${password}\n`,
    );
    assertOk(run);
    assert.equal(run.stdout, `Logged in to ${platform.url} as user admin (Admin)\n`);
    assert.equal(run.stdout.includes(password), false);
    const key = configOf(passwordHome).platform.accessKey;
    assert.notEqual(key, platform.adminKey);
    const keys = JSON.parse((await cli(passwordHome, ["platform", "get", "accesskeys", "-o", "json"])).stdout);
    assert.ok(keys.items.some((k: { spec: { type: string } }) => k.spec.type === "Login"));
  });

  it("get projects and virtualclusters: instances of every project, or of one", async () => {
    const projects = await cli(admin, ["platform", "get", "projects"]);
    assertOk(projects);
    assert.match(projects.stdout, /^NAME\s.*\ndefault\s/);
    const created = await send(platform, "POST", `${API}/namespaces/p-default/virtualclusterinstances`, {
      token: platform.adminKey,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "VirtualClusterInstance",
        metadata: { name: "vc-cli" },
        spec: { external: true },
      },
    });
    assert.equal(created.status, 201, created.body);

    const all = await cli(admin, ["platform", "get", "virtualclusters"]);
    assertOk(all);
    const [header, row] = all.stdout.trimEnd().split("\n");
    assert.match(header, /^NAMESPACE\s+NAME\s+PROJECT\s/);
    assert.match(row, /^p-default\s+vc-cli\s+default\s/);
    const one = await cli(admin, ["platform", "get", "vc", "--project", "default"]);
    assertOk(one);
    assert.match(one.stdout, /^NAME\s+PROJECT\s.*\nvc-cli\s+default\s/);
    const json = JSON.parse((await cli(admin, ["platform", "get", "virtualcluster", "vc-cli", "-o", "json"])).stdout);
    assert.equal(json.metadata.namespace, "p-default");
    const none = await cli(admin, ["platform", "get", "virtualclusters", "-n", "p-empty"]);
    assertOk(none);
    assert.equal(none.stdout, "");
    assert.equal(none.stderr, "No virtualclusters found in namespace p-empty.\n");
    assertFailure(await cli(admin, ["platform", "get", "virtualcluster", "nope"]), /virtualclusters "nope" not found/);
  });

  it("rotate-signing-key prints the new key id; -o json the whole status; non-admins are refused in one line", async () => {
    const run = await cli(admin, ["platform", "rotate-signing-key"]);
    assertOk(run);
    const [header, row] = run.stdout.trimEnd().split("\n");
    assert.match(header, /^KEY ID\s+ALGORITHM\s+PUBLISHED KEY IDS$/);
    assert.match(row, /^\S+\s+ES256\s+\S+$/);
    const json = JSON.parse(
      (await cli(admin, ["platform", "rotate-signing-key", "--algorithm", "RS256", "-o", "json"])).stdout,
    );
    assert.equal(json.status.algorithm, "RS256");
    assert.equal(json.status.publishedKeyIDs[0], json.status.keyID);

    const client = new AuthClient(platform.url, platform.caPem);
    try {
      await client.createUser(platform.adminKey, "bob");
      const bobKey = await client.createKey(platform.adminKey, "bob-cli", { user: "bob" });
      const bob = newHome();
      assertOk(await login(bob, bobKey));
      assertFailure(
        await cli(bob, ["platform", "rotate-signing-key"]),
        /signingkeyrotations.* is forbidden: User "bob" cannot create/,
      );
    } finally {
      client.close();
    }
  });

  it("logout deletes a password login's key on the platform and removes it here", async () => {
    const key = configOf(passwordHome).platform.accessKey;
    const run = await cli(passwordHome, ["platform", "logout"]);
    assertOk(run);
    assert.equal(run.stdout, `Logged out of ${platform.url}\n`);
    assert.equal(configOf(passwordHome).platform.accessKey, undefined);
    assert.equal(configOf(passwordHome).platform.host, platform.url);
    const self = await send(platform, "POST", `${API}/selves`, { token: key, body: { spec: {} } });
    assert.equal(self.status, 401);
    assertFailure(await cli(passwordHome, ["platform", "get", "users"]), /not logged in/);
    const again = await cli(passwordHome, ["platform", "logout"]);
    assertOk(again);
    assert.equal(again.stdout, "Not logged in.\n");
  });

  it("logout with a key that was not made by a login leaves it valid on the platform and says so", async () => {
    const run = await cli(admin, ["platform", "logout"]);
    assertOk(run);
    assert.match(run.stdout, /the access key "admin-bootstrap" was not made by a login, so it stays valid/);
    const self = await send(platform, "POST", `${API}/selves`, { token: platform.adminKey, body: { spec: {} } });
    assert.equal(self.status, 201);
  });

  it("completion bash prints a script bash accepts", async () => {
    const run = await cli(admin, ["completion", "bash"]);
    assertOk(run);
    assert.match(run.stdout, /complete -o default -F _virtualcluster_completion virtualcluster/);
  });
});
