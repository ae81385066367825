// secretStore on a real platform against a KV version 2 server written from Vault's API document
// (test/support/vault-kv2-server.ts; Vault itself cannot be installed here): project secrets written to the store
// at <mount>/data/<pathPrefix>/projects/<project>/<name> with the token and namespace, a value changed in the store
// read back within syncInterval, the conflict rule (the store wins), errors as conditions on the Config and on
// each secret with no value or token in any log, the token from tokenSecretRef, who may read project secrets,
// and their encryption at rest.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { startVaultTestServer, type VaultTestServer } from "./support/vault-kv2-server.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const CONFIG = `${API}/configs/platform-config`;
const SECRETS = `${API}/namespaces/p-team/projectsecrets`;
const VALUES = ["s3cr3t-one", "vault-changed-2", "platform-edit-3", "vault-wins-4", "root-t0ken", "writer-t0ken"];

interface Secret {
  metadata: { name: string; generation: number };
  spec: { data?: Record<string, string> };
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    store?: { path?: string; version?: number; observedGeneration?: number };
  };
}

const text = (value: string | undefined) => Buffer.from(value ?? "", "base64").toString("utf8");

describe("secretStore: project secrets kept in a Vault KV version 2 store", () => {
  let vault: VaultTestServer;
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  const keys: Record<string, string> = {};
  let caDir = "";

  const writeConfig = async (secretStore: Record<string, unknown>) => {
    const reply = await client.send("PATCH", CONFIG, {
      token: admin,
      body: { spec: { raw: `secretStore: ${JSON.stringify(secretStore)}\n` } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };
  const readSecret = async (name: string, token = admin): Promise<Secret> => {
    const reply = await client.send("GET", `${SECRETS}/${name}`, { token });
    assert.equal(reply.status, 200, reply.body);
    return reply.json();
  };
  const configCondition = async () => {
    const config = (await client.send("GET", CONFIG, { token: admin })).json();
    return (config.status.conditions ?? []).find((c: { type: string }) => c.type === "SecretStoreReady");
  };
  const synced = (secret: Secret) => secret.status?.conditions?.find((c) => c.type === "Synced");
  const base = (token: string) => ({
    enabled: true,
    address: vault.address,
    namespace: "platform",
    syncInterval: "1s",
    auth: { token },
  });

  before(async () => {
    vault = await startVaultTestServer({ tls: true });
    vault.addToken("root-t0ken", { namespace: "platform" });
    vault.addToken("reader-token", { namespace: "platform", readOnly: true });
    vault.addToken("writer-t0ken", { namespace: "platform", paths: ["virtualcluster-platform/projects/"] });
    // The store's certificate is trusted the way an operator trusts a private CA for Node.js programs.
    caDir = mkdtempSync(join(tmpdir(), "vcp-vault-ca-"));
    const caFile = join(caDir, "vault-ca.pem");
    writeFileSync(caFile, vault.caPem ?? "");
    platform = await startPlatformProcess({ env: { LOG_LEVEL: "debug", NODE_EXTRA_CA_CERTS: caFile } });
    client = new AuthClient(platform.url, platform.caPem);
    admin = readFileSync(join(platform.dataDir, "admin-access-key"), "utf8").trim();
    for (const user of ["ed", "viv", "other"]) {
      await client.createUser(admin, user);
      keys[user] = await client.createKey(admin, `key-${user}`, { user });
    }
    // A platform viewer reads everything but project secrets (as Kubernetes' view role leaves Secrets out).
    await client.createUser(admin, "auditor", { clusterRoles: [{ name: "viewer" }] });
    keys.auditor = await client.createKey(admin, "key-auditor", { user: "auditor" });
    for (const [name, members] of [
      [
        "team",
        [
          { kind: "User", name: "ed", clusterRole: "edit" },
          { kind: "User", name: "viv", clusterRole: "view" },
        ],
      ],
      ["elsewhere", [{ kind: "User", name: "other", clusterRole: "admin" }]],
    ] as const) {
      const reply = await client.send("POST", `${API}/projects`, {
        token: admin,
        body: { apiVersion: V1, kind: "Project", metadata: { name }, spec: { members } },
      });
      assert.equal(reply.status, 201, reply.body);
    }
  });
  after(async () => {
    client?.close();
    await platform?.stop();
    await vault?.close();
    rmSync(caDir, { recursive: true, force: true });
  });

  it("only the project's edit and admin members read and write its secrets; view members and others do not", async () => {
    const body = {
      apiVersion: V1,
      kind: "ProjectSecret",
      metadata: { name: "db" },
      spec: { stringData: { password: VALUES[0] } },
    };
    assert.equal((await client.send("POST", SECRETS, { token: keys.viv, body })).status, 403);
    assert.equal((await client.send("POST", SECRETS, { token: keys.other, body })).status, 403);
    const created = await client.send("POST", SECRETS, { token: keys.ed, body });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.json().spec.stringData, undefined, "stringData is merged into data");
    assert.equal(text(created.json().spec.data.password), VALUES[0]);
    assert.equal((await client.send("GET", `${SECRETS}/db`, { token: keys.viv })).status, 403);
    assert.equal((await client.send("GET", `${SECRETS}/db`, { token: keys.other })).status, 403);
    for (const path of [`${SECRETS}/db`, SECRETS, `${API}/projectsecrets`, `${SECRETS}?watch=1`]) {
      assert.equal((await client.send("GET", path, { token: keys.auditor })).status, 403, path);
    }
    assert.equal((await client.send("GET", `${API}/projects/team`, { token: keys.auditor })).status, 200);
    assert.equal(
      (await client.send("GET", `${API}/namespaces/p-elsewhere/projectsecrets`, { token: keys.ed })).status,
      403,
    );
    // Members never write the sync state.
    const status = await client.send("PATCH", `${SECRETS}/db/status`, {
      token: keys.ed,
      body: { status: { store: { version: 99 } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(status.status, 403);
    // Not a project namespace: refused with a reason.
    const stray = await client.send("POST", `${API}/namespaces/p-nothing/projectsecrets`, { token: admin, body });
    assert.equal(stray.status, 422);
    assert.match(stray.json().message, /not the namespace of an existing project/);
  });

  it("the values are encrypted at rest in the platform's store", async () => {
    const store = readFileSync(join(platform.dataDir, "platform.db"));
    assert.equal(store.includes(VALUES[0]), false);
    assert.equal(store.includes(Buffer.from(VALUES[0]).toString("base64")), false);
  });

  it("enabled, the secret is written to the store with the token and namespace, at its project's path", async () => {
    await writeConfig(base("root-t0ken"));
    await waitFor(async () => (await readSecret("db")).status?.store?.version === 1, "the first store version");
    const secret = await readSecret("db");
    assert.equal(secret.status?.store?.path, "secret/data/virtualcluster-platform/projects/team/db");
    assert.equal(synced(secret)?.status, "True");
    assert.deepEqual(vault.peek("platform", "virtualcluster-platform/projects/team/db")?.data, { password: VALUES[0] });
    const write = vault.requests.find((r) => r.method === "POST");
    assert.equal(write?.token, "root-t0ken");
    assert.equal(write?.namespace, "platform");
    assert.equal(write?.vaultRequest, "true");
    assert.deepEqual(write?.body, { data: { password: VALUES[0] } });
    await waitFor(async () => (await configCondition())?.status === "True", "SecretStoreReady");
  });

  it("a value changed in the store reaches the platform within syncInterval", async () => {
    vault.put("platform", "virtualcluster-platform/projects/team/db", { password: VALUES[1] });
    await waitFor(async () => text((await readSecret("db")).spec.data?.password) === VALUES[1], "the store's value");
    const secret = await readSecret("db");
    assert.equal(secret.status?.store?.version, 2);
    assert.equal(secret.status?.store?.observedGeneration, secret.metadata.generation);
  });

  it("a change on the platform is written with check-and-set on the agreed version", async () => {
    const reply = await client.send("PATCH", `${SECRETS}/db`, {
      token: keys.ed,
      body: { spec: { stringData: { password: VALUES[2] } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
    await waitFor(async () => vault.peek("platform", "virtualcluster-platform/projects/team/db")?.version === 3, "v3");
    const write = vault.requests.filter((r) => r.method === "POST").at(-1);
    assert.deepEqual(write?.body, { data: { password: VALUES[2] }, options: { cas: 2 } });
  });

  it("errors show as conditions on the Config and the secret: permission denied, then sealed", async () => {
    await writeConfig(base("reader-token"));
    await client.send("PATCH", `${SECRETS}/db`, {
      token: keys.ed,
      body: { spec: { stringData: { password: "unsynced-edit" } } },
      contentType: "application/merge-patch+json",
    });
    await waitFor(async () => synced(await readSecret("db"))?.reason === "PermissionDenied", "PermissionDenied");
    assert.match(synced(await readSecret("db"))?.message ?? "", /permission denied \(403\)/);
    await waitFor(async () => (await configCondition())?.reason === "PermissionDenied", "the Config's condition");
    vault.sealed = true;
    try {
      await waitFor(async () => (await configCondition())?.reason === "Sealed", "Sealed on the Config");
      assert.equal((await configCondition())?.status, "False");
      assert.match((await configCondition())?.message ?? "", /team\/db: read .*sealed/);
      assert.equal(synced(await readSecret("db"))?.reason, "Sealed");
    } finally {
      vault.sealed = false;
    }
  });

  it("on a conflict the store wins: its newer version replaces the platform's unsynced change, and says so", async () => {
    // The platform's change above never reached the store (403, then sealed); someone writes in the store now.
    vault.put("platform", "virtualcluster-platform/projects/team/db", { password: VALUES[3] });
    await writeConfig(base("writer-t0ken"));
    await waitFor(async () => synced(await readSecret("db"))?.reason === "StoreWon", "StoreWon");
    const secret = await readSecret("db");
    assert.equal(text(secret.spec.data?.password), VALUES[3]);
    assert.match(synced(secret)?.message ?? "", /the store's version 4 replaced a change made on the platform/);
    assert.equal(vault.peek("platform", "virtualcluster-platform/projects/team/db")?.version, 4);
  });

  it("the token can come from the project secret tokenSecretRef names in the platform's namespace", async () => {
    const token = await client.send("POST", `${API}/namespaces/virtualcluster-platform/projectsecrets`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "ProjectSecret",
        metadata: { name: "vault" },
        spec: { stringData: { token: "root-t0ken" } },
      },
    });
    assert.equal(token.status, 201, token.body);
    assert.equal(
      (await client.send("GET", `${API}/namespaces/virtualcluster-platform/projectsecrets/vault`, { token: keys.ed }))
        .status,
      403,
    );
    const { auth: _, ...rest } = base("");
    await writeConfig({ ...rest, auth: { tokenSecretRef: { name: "vault", key: "token" } } });
    const before = vault.requests.length;
    await waitFor(
      async () => vault.requests.slice(before).some((r) => r.token === "root-t0ken"),
      "a request with the referenced token",
    );
    await waitFor(
      async () => (await configCondition())?.status === "True",
      "SecretStoreReady with the referenced token",
    );
    await writeConfig({ ...rest, auth: { tokenSecretRef: { name: "missing", key: "token" } } });
    await waitFor(async () => (await configCondition())?.reason === "TokenSecretMissing", "TokenSecretMissing");
    assert.match((await configCondition())?.message ?? "", /virtualcluster-platform\/missing does not exist/);
  });

  it("deleting a project secret deletes it in the store", async () => {
    await writeConfig(base("root-t0ken"));
    await waitFor(async () => (await configCondition())?.status === "True", "SecretStoreReady");
    assert.equal((await client.send("DELETE", `${SECRETS}/db`, { token: keys.ed })).status, 200);
    await waitFor(
      async () => vault.peek("platform", "virtualcluster-platform/projects/team/db") === undefined,
      "the store's copy deleted",
    );
  });

  it("no secret value or token appears in the platform's log", () => {
    const log = platform.stderr();
    for (const value of VALUES) assert.equal(log.includes(value), false, `the log holds ${value}`);
    assert.equal(log.includes("unsynced-edit"), false);
  });
});
