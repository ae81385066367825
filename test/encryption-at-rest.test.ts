// Secrets at rest (issue 15 item 2): signing keys, instance CA keys, password hashes and the Config are sealed in
// platform.db under a key kept outside it. A copy of platform.db alone yields none of them; the key rotates online;
// a store from an older version is sealed at its first start; a missing or wrong key file stops the start.

import assert from "node:assert/strict";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { loadSigningKey, type StoredSigningKey } from "../src/auth/signing/signing-key.ts";
import { readEncryptionKeys } from "../src/platform/encryption-key-file.ts";
import { SECRET_PREFIXES } from "../src/platform/store-encryption.ts";
import {
  encryptionKeyId,
  isEncryptedValue,
  sealingKeyId,
  ValueCipher,
} from "../src/storage/encryption/value-cipher.ts";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { TestBrowser } from "./support/browser.ts";
import { runCli } from "./support/cli-run.ts";
import { eventually } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type SamlTestIdp, startSamlTestIdp } from "./support/saml-test-idp.ts";

const V1 = "management.platform.sh/v1";
const CLIENT_SECRET = "oidc-Cl1ent-s3cret-at-rest";
const VAULT_TOKEN = "vault-T0ken-at-rest";
/** The CLI's one-time state of a single sign-on login in progress (sealed in the browser, never stored). */
const CLI_STATE = "cli-St4te-of-a-login-in-progress";
/** The Config: an OIDC client secret, a SAML connector of the tests' signing IdP, a secret store token. */
const configRaw = (idp: SamlTestIdp, platformUrl: string) =>
  `auth:\n  oidc: {issuerUrl: "https://idp.example.com", clientId: platform, clientSecret: ${CLIENT_SECRET}}\n` +
  `  saml: {ssoURL: "${idp.ssoUrl}", redirectURI: "${platformUrl}/auth/saml/callback", usernameAttr: uid, ` +
  `caData: ${Buffer.from(idp.signingCertPem).toString("base64")}}\nsecretStore:\n  auth: {token: ${VAULT_TOKEN}}\n`;

interface Row {
  name: string;
  value: string | null;
}

/** Every row of a copy of the store file, history included (the platform must be stopped). */
async function copiedRows(dataDir: string): Promise<{ rows: Row[]; bytes: Buffer }> {
  const copy = join(await mkdtemp(join(tmpdir(), "vcp-copy-")), "platform.db");
  await copyFile(join(dataDir, "platform.db"), copy);
  const db = new DatabaseSync(copy, { readOnly: true });
  try {
    return { rows: db.prepare("SELECT name, value FROM kv").all() as unknown as Row[], bytes: await readFile(copy) };
  } finally {
    db.close();
  }
}

const isSecretKey = (key: string) => SECRET_PREFIXES.some((prefix) => key.startsWith(prefix));

const cli = (home: string, args: string[]) => runCli(args, { env: { ...process.env, VIRTUALCLUSTER_HOME: home } });

/** Starts the platform expecting it to refuse; resolves to its stderr. */
function failedStart(dataDir: string, extraArgs: string[] = []): Promise<string> {
  return startPlatformProcess({ dataDir, extraArgs }).then(
    async (platform) => {
      await platform.stop();
      assert.fail("the platform started");
    },
    (error: Error) => error.message,
  );
}

const PROJECT_SECRET = "project-s3cret-value";

describe("encryption at rest", () => {
  let dataDir: string;
  let home: string;
  let platform: PlatformProcess;
  let client: AuthClient;
  let adminPassword: string;
  let idp: SamlTestIdp;

  const start = async () => {
    platform = await startPlatformProcess({ dataDir });
    client?.close();
    client = new AuthClient(platform.url, platform.caPem);
  };
  const stop = async () => {
    client?.close();
    await platform?.stop();
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-encryption-"));
    home = await mkdtemp(join(tmpdir(), "vcp-encryption-home-"));
    await start();
    adminPassword = (await readFile(join(dataDir, "admin-password"), "utf8")).trim();
    idp = await startSamlTestIdp();
    idp.behaviour = { sign: "assertion" };
    idp.user = { nameId: "sam-id", attributes: { uid: ["sam"] } };
    const config = await client.send("PATCH", `${API}/configs/platform-config`, {
      token: platform.adminKey,
      body: { spec: { raw: configRaw(idp, platform.url) } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(config.status, 200, config.body);
    const project = await client.send("POST", `${API}/projects`, {
      token: platform.adminKey,
      body: { apiVersion: V1, kind: "Project", metadata: { name: "sealed" }, spec: { owner: { user: "admin" } } },
    });
    assert.equal(project.status, 201, project.body);
    const instance = await client.send("POST", `${API}/namespaces/p-sealed/virtualclusterinstances`, {
      token: platform.adminKey,
      body: { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name: "vc1" }, spec: {} },
    });
    assert.equal(instance.status, 201, instance.body);
    const secret = await client.send("POST", `${API}/namespaces/p-sealed/projectsecrets`, {
      token: platform.adminKey,
      body: {
        apiVersion: V1,
        kind: "ProjectSecret",
        metadata: { name: "db" },
        spec: { stringData: { password: PROJECT_SECRET } },
      },
    });
    assert.equal(secret.status, 201, secret.body);
  });
  after(async () => {
    await stop();
    await idp?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  it("makes <data-dir>/pki/encryption.key on first start, 0600, holding one 32-byte key", async () => {
    const file = join(dataDir, "pki", "encryption.key");
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await readEncryptionKeys(file))?.length, 1);
  });

  it("a copy of platform.db holds no secret: every secret value is sealed, and no secret text appears in the file", async () => {
    // The instance's CA key is stored once the project controller has seen the instance.
    await eventually(async () => {
      const got = await client.send("GET", `${API}/namespaces/p-sealed/virtualclusterinstances/vc1`, {
        token: platform.adminKey,
      });
      return typeof got.json().status?.clientCertificateAuthority === "string";
    }, "the instance's client CA");
    // A SAML login: the assertion's ID is kept (after its signature was verified) so a replay is refused.
    const browser = new TestBrowser([platform.caPem, idp.tls.caPem]);
    const atIdp = await browser.navigate(`${platform.url}/auth/saml/login`);
    const done = await browser.submit(await browser.submit(atIdp));
    assert.equal(done.status, 200, done.body);
    // A CLI login through SAML, started and not finished: its state is sealed in the browser, not stored.
    const started = await client.send(
      "GET",
      `/auth/saml/login?cli_redirect=${encodeURIComponent("http://127.0.0.1:4711/cb")}&cli_state=${CLI_STATE}`,
    );
    assert.equal(started.status, 200, started.body);
    await stop();
    const { rows, bytes } = await copiedRows(dataDir);
    const secretRows = rows.filter((row) => isSecretKey(row.name) && row.value !== null);
    for (const prefix of SECRET_PREFIXES) {
      assert.ok(
        secretRows.some((row) => row.name.startsWith(prefix)),
        `the store has a value under ${prefix} (the test covers every kind of secret)`,
      );
    }
    for (const row of secretRows) assert.ok(isEncryptedValue(row.value!), `${row.name} is sealed`);
    const text = bytes.toString("latin1");
    for (const secret of [
      CLIENT_SECRET,
      VAULT_TOKEN,
      PROJECT_SECRET,
      Buffer.from(PROJECT_SECRET).toString("base64"),
      CLI_STATE,
      "PRIVATE KEY",
      "privateJwk",
      '"hash"',
      adminPassword,
    ]) {
      assert.ok(!text.includes(secret), `platform.db does not contain ${secret}`);
    }
    // Trying to load the signing key from the copy gets nowhere.
    const signing = secretRows.filter((row) => row.name.startsWith("/internal/signingkeys/"));
    for (const row of signing) {
      assert.throws(() => loadSigningKey(JSON.parse(row.value!) as StoredSigningKey));
    }
    await start();
  });

  it("rotate-encryption-key re-seals every secret under a new key while serving, and retires the old key", async () => {
    const keyFile = join(dataDir, "pki", "encryption.key");
    const [oldKey] = (await readEncryptionKeys(keyFile))!;
    const login = await cli(home, [
      "platform",
      "login",
      platform.url,
      "--ca-file",
      join(dataDir, "pki", "ca.crt"),
      "--access-key",
      platform.adminKey,
    ]);
    assert.equal(login.code, 0, login.stderr);
    // Writers keep going during the rotation: password changes (a secret) and users (not secret).
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) {
        await client.createUser(platform.adminKey, `during-${n}`);
        const set = await client.setPassword(platform.adminKey, `during-${n}`, `Pa55word-${n}-long-enough`);
        assert.equal(set.status, 201, set.body);
        n++;
      }
      return n;
    })();
    const rotation = await cli(home, ["platform", "rotate-encryption-key", "-o", "json"]);
    writing = false;
    const written = await writes;
    assert.ok(written > 0, "writes ran during the rotation");
    assert.equal(rotation.code, 0, rotation.stderr);
    const status = JSON.parse(rotation.stdout).status;
    const keys = (await readEncryptionKeys(keyFile))!;
    assert.equal(keys.length, 1, "the old key left the key file");
    assert.equal(status.keyID, encryptionKeyId(keys[0]));
    assert.deepEqual(status.retiredKeyIDs, [encryptionKeyId(oldKey)]);
    assert.ok(status.reencrypted >= 4, `re-encrypted ${status.reencrypted}`);

    const table = await cli(home, ["platform", "rotate-encryption-key"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^KEY ID\s+RETIRED KEY IDS\s+RE-ENCRYPTED\n\S+\s+\S+\s+\d+\n$/);

    // Every secret still works: passwords set before and during the rotation, and the admin's.
    assert.equal((await client.login("admin", adminPassword)).status, 200);
    assert.equal((await client.login(`during-${written - 1}`, `Pa55word-${written - 1}-long-enough`)).status, 200);
    await stop();
    const { rows, bytes } = await copiedRows(dataDir);
    const current = encryptionKeyId((await readEncryptionKeys(keyFile))![0]);
    for (const row of rows.filter((r) => isSecretKey(r.name) && r.value !== null)) {
      assert.equal(sealingKeyId(row.value!), current, `${row.name} (history included) is sealed by the current key`);
    }
    assert.ok(!bytes.toString("latin1").includes(encryptionKeyId(oldKey)), "no value of the retired key remains");
    await start();
    assert.equal((await client.login("admin", adminPassword)).status, 200);
  });

  it("non-admins cannot rotate the encryption key", async () => {
    await client.createUser(platform.adminKey, "mallory");
    const key = await client.createKey(platform.adminKey, "mallory-key", { user: "mallory" });
    const reply = await client.send("POST", `${API}/encryptionkeyrotations`, {
      token: key,
      body: { apiVersion: V1, kind: "EncryptionKeyRotation", spec: {} },
    });
    assert.equal(reply.status, 403, reply.body);
  });

  it("refuses to start without the store's key file, or with another one, saying which and how to fix it", async () => {
    await stop();
    const keyFile = join(dataDir, "pki", "encryption.key");
    const saved = await readFile(keyFile);
    await rm(keyFile);
    const missing = await failedStart(dataDir);
    assert.match(
      missing,
      /error: the store holds encrypted values \(\S+\) but the encryption key file \S+encryption.key is missing: restore it from your backup/,
    );
    assert.ok(!(await readdir(join(dataDir, "pki"))).includes("encryption.key"), "no new key was made");

    const other = join(dataDir, "other.key");
    await writeFile(other, `${Buffer.alloc(32, 7).toString("base64")}\n`, { mode: 0o600 });
    const wrong = await failedStart(dataDir, ["--encryption-key-file", other]);
    assert.match(
      wrong,
      /which is not among the platform's encryption keys .*is not the key file this store was encrypted with/,
    );
    const absent = await failedStart(dataDir, ["--encryption-key-file", join(dataDir, "absent.key")]);
    assert.match(absent, /error: the encryption key file \S+absent.key does not exist/);

    // The operator's own copy of the key, outside the data directory, works.
    await writeFile(other, saved, { mode: 0o600 });
    platform = await startPlatformProcess({ dataDir, extraArgs: ["--encryption-key-file", other] });
    client = new AuthClient(platform.url, platform.caPem);
    assert.equal((await client.login("admin", adminPassword)).status, 200);
    await stop();
    await writeFile(keyFile, saved, { mode: 0o600 });
    await start();
  });
});

describe("encryption at rest: a damaged sealed value", () => {
  it("stops the start naming the key and saying the store is corrupt, never quoting the value", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vcp-tampered-"));
    try {
      await (await startPlatformProcess({ dataDir })).stop();
      const store = await openSqliteStore({ path: join(dataDir, "platform.db") });
      const [victim] = (await store.list({ prefix: "/internal/passwords/" })).records;
      const tail = victim.value.length - 5;
      const flipped = `${victim.value.slice(0, tail)}${victim.value[tail] === "A" ? "B" : "A"}${victim.value.slice(tail + 1)}`;
      await store.update(victim.key, flipped, victim.revision);
      await store.close();
      const message = await failedStart(dataDir);
      assert.match(
        message,
        new RegExp(
          `error: the platform's storage is corrupt: the encrypted value at ${victim.key} failed authentication.*virtualcluster platform restore`,
        ),
      );
      assert.ok(!message.includes(flipped.slice(-20)), "the stored value is not quoted");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("encryption at rest for a store written by an older version", () => {
  it("seals its plain secret values at the first start and leaves no plain copy in the file", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vcp-legacy-"));
    try {
      const first = await startPlatformProcess({ dataDir });
      const password = (await readFile(join(dataDir, "admin-password"), "utf8")).trim();
      await first.stop();
      // Turn it into what an older version left: plain secret values and no key file.
      const keyFile = join(dataDir, "pki", "encryption.key");
      const cipher = new ValueCipher((await readEncryptionKeys(keyFile))!);
      const store = await openSqliteStore({ path: join(dataDir, "platform.db") });
      const plainValues: string[] = [];
      for (const prefix of SECRET_PREFIXES) {
        for (const record of (await store.list({ prefix })).records) {
          const plain = cipher.open(record.key, record.value);
          plainValues.push(plain);
          await store.update(record.key, plain, record.revision);
        }
      }
      await store.close();
      await rm(keyFile);
      assert.ok(
        (await copiedRows(dataDir)).bytes.toString("latin1").includes("privateJwk"),
        "the legacy store is plain",
      );

      const upgraded = await startPlatformProcess({ dataDir });
      const client = new AuthClient(upgraded.url, upgraded.caPem);
      try {
        assert.equal((await client.login("admin", password)).status, 200);
      } finally {
        client.close();
        await upgraded.stop();
      }
      const { rows, bytes } = await copiedRows(dataDir);
      for (const row of rows.filter((r) => isSecretKey(r.name) && r.value !== null)) {
        assert.ok(isEncryptedValue(row.value!), `${row.name} is sealed`);
      }
      const text = bytes.toString("latin1");
      for (const plain of plainValues) assert.ok(!text.includes(plain.slice(0, 60)), "no plain version remains");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
