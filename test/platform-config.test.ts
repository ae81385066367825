// The Config resource against the real platform over HTTPS: kubectl get/explain/apply/replace, validation errors
// with field paths, secrets that no read returns, and live effects of API writes without a restart.

import assert from "node:assert/strict";
import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { capture, send } from "./support/https-json.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const API = "/apis/management.platform.sh/v1";
const CONFIG = `${API}/configs/platform-config`;
const SECRETS = /oidc-s3cret|corp-s3cret|vault-t0ken/;

const configYaml = (raw: string) =>
  `apiVersion: management.platform.sh/v1\nkind: Config\nmetadata:\n  name: platform-config\nspec:\n  raw: |\n${raw
    .split("\n")
    .map((line) => (line ? `    ${line}` : line))
    .join("\n")}`;

const SECRET_RAW = `auth:
  oidc: {issuerUrl: "https://idp.example.com", clientId: platform, clientSecret: oidc-s3cret}
  connectors:
  - id: corp
    idpB: {clientId: corp, clientSecret: corp-s3cret}
secretStore:
  auth: {token: vault-t0ken}
`;

describe("platform config over HTTPS", () => {
  let platform: PlatformProcess;
  let kubectl: Kubectl;
  let admin: string;
  let logs: () => string;

  before(async () => {
    platform = await startPlatformProcess();
    logs = capture(platform.child.stderr);
    kubectl = new Kubectl(platform.kubeconfig);
    admin = platform.adminKey;
  });
  after(() => platform?.stop());

  const writeRaw = async (raw: string) => {
    const reply = await send(platform, "PATCH", CONFIG, {
      token: admin,
      body: { spec: { raw } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
    return reply;
  };

  it("kubectl get configs shows the singleton the platform created, with its columns", {
    skip: kubectlSkip,
  }, async () => {
    const out = await kubectl.ok(["get", "configs"]);
    assert.match(out, /^NAME\s+PLATFORM HOST\s+AUDIT\s+CONFIG ENDPOINT\s+AGE\n/);
    assert.match(out, /platform-config\s+false\s+Enabled/);
    const other = await kubectl.run(["get", "config", "other"]);
    assert.match(other.stderr, /configs.management.platform.sh "other" not found/);
  });

  it("kubectl explain describes configs.spec and configs.status.auth from the schema", {
    skip: kubectlSkip,
  }, async () => {
    assert.match(await kubectl.ok(["explain", "configs.spec"]), /raw\s+<string>/);
    const auth = await kubectl.ok(["explain", "configs.status.auth"]);
    assert.match(auth, /accessKeyMaxTTLSeconds\s+<integer>/);
    assert.match(auth, /groupsFilters\s+<\[\]string>/);
    assert.match(await kubectl.ok(["explain", "configs.status.secretStore.syncInterval"]), /Go duration/);
  });

  it("kubectl apply reports each invalid field at its path inside spec.raw and stores nothing", {
    skip: kubectlSkip,
  }, async () => {
    const before = (await send(platform, "GET", CONFIG, { token: admin })).json();
    const result = await kubectl.run(
      ["apply", "-f", "-"],
      configYaml(
        "auth:\n  groupsFilters: ['(broken']\ncloud:\n  maintenanceWindow: {dayOfWeek: Funday, timeWindow: '9-5'}\n",
      ),
    );
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /spec\.raw\.auth\.groupsFilters\[0\]: Invalid value: "\(broken": must be a valid regular expression/,
    );
    assert.match(result.stderr, /spec\.raw\.cloud\.maintenanceWindow\.dayOfWeek/);
    assert.match(result.stderr, /spec\.raw\.cloud\.maintenanceWindow\.timeWindow/);
    const afterwards = (await send(platform, "GET", CONFIG, { token: admin })).json();
    assert.equal(afterwards.metadata.resourceVersion, before.metadata.resourceVersion);
  });

  it("a deprecated field is accepted with a Warning header", async () => {
    const reply = await writeRaw("workspaceSubDomain: '*.ws.example.com'\n");
    assert.match(
      String(reply.headers.warning),
      /299 - "spec\.raw\.workspaceSubDomain: workspaceSubDomain is deprecated/,
    );
  });

  it("POST replaces the singleton; another name is refused", async () => {
    const body = {
      apiVersion: "management.platform.sh/v1",
      kind: "Config",
      metadata: { name: "platform-config" },
      spec: { raw: "platformHost: posted.example.com\n" },
    };
    const posted = await send(platform, "POST", `${API}/configs`, { token: admin, body });
    assert.equal(posted.status, 201, posted.body);
    assert.equal(posted.json().status.platformHost, "posted.example.com");
    const other = await send(platform, "POST", `${API}/configs`, {
      token: admin,
      body: { ...body, metadata: { name: "other" } },
    });
    assert.equal(other.status, 422);
    const deleted = await send(platform, "DELETE", CONFIG, { token: admin });
    assert.equal(deleted.status, 405);
  });

  it("no read returns a secret: get, list, watch, apply responses, managedFields and the last-applied annotation", {
    skip: kubectlSkip,
  }, async () => {
    const applied = await kubectl.ok(["apply", "-f", "-", "-o", "json"], configYaml(SECRET_RAW));
    const watch = send(platform, "GET", `${API}/configs?watch=1&resourceVersion=0&timeoutSeconds=1`, { token: admin });
    const reads = [
      applied,
      await kubectl.ok(["get", "config", "platform-config", "-o", "yaml", "--show-managed-fields"]),
      await kubectl.ok(["get", "configs", "-o", "json"]),
      (await send(platform, "GET", CONFIG, { token: admin, contentType: "application/yaml" })).body,
      (await watch).body,
    ];
    for (const read of reads) assert.doesNotMatch(read, SECRETS);
    const config = parse(reads[1]);
    assert.match(config.spec.raw, /clientSecret: <redacted>/);
    assert.equal(config.status.auth.connectors[0].idpB.clientSecret, "<redacted>");
    assert.equal(config.status.secretStore.auth.token, "<redacted>");
    assert.match(config.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"], /<redacted>/);
  });

  it("kubectl replace of what get returned keeps every stored secret (the marker stands for it)", {
    skip: kubectlSkip,
  }, async () => {
    const read = parse(await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]));
    read.spec.raw = read.spec.raw.replace("clientId: platform,", "clientId: platform, getUserInfo: true,");
    await kubectl.ok(["replace", "-f", "-"], JSON.stringify(read));
    const after = parse(await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]));
    assert.equal(after.status.auth.oidc.getUserInfo, true);
    assert.equal(after.status.auth.oidc.clientSecret, "<redacted>", "a secret is still stored");
    // A marker where nothing was stored is refused: the marker never becomes a value.
    const bogus = await send(platform, "PATCH", CONFIG, {
      token: admin,
      body: {
        spec: {
          raw: `${after.spec.raw}apps:\n  repositories: [{name: new, url: "https://c", password: <redacted>}]\n`,
        },
      },
      contentType: "application/merge-patch+json",
    });
    assert.equal(bogus.status, 422);
    assert.match(bogus.body, /spec\.raw\.apps\.repositories\[0\]\.password/);
  });

  it("a kept secret is never sent elsewhere: moving issuer, client id or tenant beside the marker is a 422 naming the field", {
    skip: kubectlSkip,
  }, async () => {
    const exported = await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]);
    for (const [from, to, field] of [
      ['issuerUrl: "https://idp.example.com"', 'issuerUrl: "https://attacker.example"', "auth.oidc.issuerUrl"],
      ["clientId: platform,", "clientId: someone-else,", "auth.oidc.clientId"],
      ["clientId: corp,", "clientId: corp, tenant: attacker-tenant,", "auth.connectors[0].idpB.tenant"],
    ]) {
      const read = parse(exported);
      assert.ok(read.spec.raw.includes(from), from);
      read.spec.raw = read.spec.raw.replace(from, to);
      const refused = await kubectl.run(["replace", "-f", "-"], JSON.stringify(read));
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, new RegExp(`spec\\.raw\\.${field.replace(/[.[\]]/g, "\\$&")}`));
      assert.match(refused.stderr, /re-enter the secret/);
      assert.doesNotMatch(refused.stderr, SECRETS);
    }
    const unchanged = parse(await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]));
    assert.equal(unchanged.status.auth.oidc.issuerUrl, "https://idp.example.com");
  });

  it("kubectl apply --server-side of an exported (redacted) config keeps the stored secrets", {
    skip: kubectlSkip,
  }, async () => {
    const exported = await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]);
    const out = await kubectl.ok(["apply", "--server-side", "--force-conflicts", "-f", "-"], exported);
    assert.match(out, /serverside-applied/);
    const after = parse(await kubectl.ok(["get", "config", "platform-config", "-o", "yaml"]));
    assert.equal(after.status.secretStore.auth.token, "<redacted>");
  });

  it("authenticateVersionEndpoint takes effect at once: /version then needs a valid key", async () => {
    assert.equal((await send(platform, "GET", "/version")).status, 200);
    await writeRaw("authenticateVersionEndpoint: true\n");
    assert.equal((await send(platform, "GET", "/version")).status, 401);
    assert.equal((await send(platform, "GET", "/version", { token: "not-a-key" })).status, 401);
    assert.equal((await send(platform, "GET", "/version", { token: admin })).status, 200);
    await writeRaw("");
    assert.equal((await send(platform, "GET", "/version")).status, 200);
  });

  it("password login, its custom headers and the access key limits follow the config at once", async () => {
    await writeRaw(
      "auth:\n  password: {disabled: true}\n  customHttpHeaders: {X-Frame-Options: DENY}\n  accessKeyMaxTTLSeconds: 600\n",
    );
    const login = await send(platform, "POST", "/auth/password/login", { body: { username: "admin", password: "x" } });
    assert.equal(login.status, 403);
    assert.match(login.body, /password login is disabled/);
    assert.equal(login.headers["x-frame-options"], "DENY");
    const key = await send(platform, "POST", `${API}/ownedaccesskeys`, {
      token: admin,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: "long-lived" },
        spec: { user: "admin", ttl: 86400, type: "User", displayName: "long-lived" },
      },
    });
    assert.ok(key.status === 422 || (key.status === 201 && key.json().spec.ttl <= 600), key.body);
    await writeRaw("");
    const enabled = await send(platform, "POST", "/auth/password/login", {
      body: { username: "admin", password: "wrong" },
    });
    assert.equal(enabled.status, 401);
    assert.equal(enabled.headers["x-frame-options"], undefined);
  });

  it("projectNamespacePrefix takes effect at once (selves reports it)", async () => {
    await writeRaw("projectNamespacePrefix: team-\n");
    const self = await send(platform, "POST", `${API}/selves`, { token: admin, body: {} });
    assert.equal(self.json().status.projectNamespacePrefix, "team-");
    await writeRaw("");
  });

  it("enabling audit through the API starts the log without a restart", async () => {
    const path = join(platform.dataDir, "audit", "api-enabled.log");
    await writeRaw("audit: {enabled: true, level: 1, path: api-enabled.log}\n");
    await send(platform, "GET", `${API}/users/admin`, { token: admin });
    await eventually(async () => {
      const text = await readFile(path, "utf8").catch(() => "");
      return text.includes('"objectRef":{"resource":"users","name":"admin"');
    }, "an audit event for GET users/admin");
    await writeRaw("");
  });

  it("audit.path cannot reach the platform's own files: outside the audit directory, .. or a link out is 422", async () => {
    const key = join(platform.dataDir, "pki", "encryption.key");
    const keyBefore = await readFile(key);
    await symlink(join(platform.dataDir, "pki"), join(platform.dataDir, "audit", "to-pki"));
    const before = (await send(platform, "GET", CONFIG, { token: admin })).json().metadata.resourceVersion;
    for (const path of [key, "../pki/encryption.key", "to-pki/encryption.key", join(platform.dataDir, "audit.log")]) {
      const reply = await send(platform, "PATCH", CONFIG, {
        token: admin,
        body: { spec: { raw: `audit: {enabled: true, level: 1, path: ${path}}\n` } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(reply.status, 422, `${path}: ${reply.body}`);
      const cause = reply.json().details.causes[0];
      assert.equal(cause.field, "spec.raw.audit.path");
      assert.ok(cause.message.includes(join(platform.dataDir, "audit")), cause.message);
    }
    const after = (await send(platform, "GET", CONFIG, { token: admin })).json().metadata.resourceVersion;
    assert.equal(after, before, "nothing was stored");

    // The same name, relative, is a file of the audit directory: the key is never touched.
    await writeRaw("audit: {enabled: true, level: 1, path: pki/encryption.key, maxSize: 1, maxBackups: 1}\n");
    await send(platform, "GET", `${API}/users/admin`, { token: admin });
    const written = join(platform.dataDir, "audit", "pki", "encryption.key");
    await eventually(
      async () => (await readFile(written, "utf8").catch(() => "")).includes('"kind":"Event"'),
      "the log",
    );
    assert.deepEqual(await readFile(key), keyBefore, "the encryption key is untouched");
    await writeRaw("");
  });

  it("no secret written through the API appears in the platform's log", () => {
    assert.doesNotMatch(logs(), SECRETS);
  });
});
