// Kubeconfigs of virtual cluster instances from the real platform over HTTPS: the token form (a new access key of the
// caller, listed with its keys, scoped to the one virtual cluster, revocable), the client-certificate form (checked
// with @peculiar/x509 and openssl), the lifetimes, the ingress rule, and that no credential reaches the audit log
// even under a RequestResponse policy.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { x509 } from "../src/pki/x509.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { capture } from "./support/https-json.ts";
import { eventually, kubectlAvailable } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const run = promisify(execFile);
const V1 = "management.platform.sh/v1";
const NS = "p-team-k";
const INSTANCES = `${API}/namespaces/${NS}/virtualclusterinstances`;
const SERVING_CA = "-----BEGIN CERTIFICATE-----\nMIIBserving\n-----END CERTIFICATE-----\n";
const opensslAvailable = await run("openssl", ["version"]).then(
  () => true,
  () => false,
);

interface Kubeconfig {
  clusters: { name: string; cluster: { server: string; "certificate-authority-data"?: string } }[];
  users: { name: string; user: { token?: string; "client-certificate-data"?: string; "client-key-data"?: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  "current-context": string;
}

describe("instance kubeconfigs", () => {
  let dir: string;
  let platform: PlatformProcess;
  let client: AuthClient;
  let output: () => string;
  let kim: string;
  let nobody: string;
  const issued: string[] = [];

  /** POSTs a kubeconfig request as `token`; every credential handed out is remembered for the leak check. */
  const request = async (token: string, instance: string, spec?: Record<string, unknown>) => {
    const reply = await client.send("POST", `${INSTANCES}/${instance}/kubeconfig`, {
      token,
      body: spec === undefined ? undefined : { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec },
    });
    if (reply.status === 201) issued.push(reply.json().status.kubeConfig);
    return reply;
  };
  /** The kubeconfig as kubectl reads it (or, without kubectl, as YAML). */
  const parse = async (document: string): Promise<Kubeconfig> => {
    const file = join(dir, `kubeconfig-${issued.length}`);
    await writeFile(file, document, { mode: 0o600 });
    if (!kubectlAvailable) return (await import("yaml")).parse(document);
    const { stdout } = await run("kubectl", ["config", "view", "--kubeconfig", file, "--raw", "-o", "json"]);
    return JSON.parse(stdout);
  };
  const key = (name: string, token = kim) => client.send("GET", `${API}/ownedaccesskeys/${name}`, { token });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-kubeconfig-"));
    const config = join(dir, "platform.yaml");
    await writeFile(
      config,
      `audit:\n  enabled: true\n  path: ${join(dir, "audit", "audit.log")}\n  policy:\n    rules:\n    - level: RequestResponse\n`,
    );
    platform = await startPlatformProcess({ extraArgs: ["--config", config, "--audit-dir", dir] });
    output = capture(platform.child.stdout);
    const errors = capture(platform.child.stderr);
    const both = output;
    output = () => both() + errors();
    client = new AuthClient(platform.url, platform.caPem);
    const admin = platform.adminKey;
    await client.createUser(admin, "kim", { groups: ["devs", "qa"] });
    await client.createUser(admin, "nobody");
    kim = await client.createKey(admin, "kim-key", { user: "kim" });
    nobody = await client.createKey(admin, "nobody-key", { user: "nobody" });
    const post = async (path: string, body: unknown) => {
      const reply = await client.send("POST", path, { token: admin, body });
      assert.equal(reply.status, 201, reply.body);
    };
    await post(`${API}/teams`, {
      apiVersion: V1,
      kind: "Team",
      metadata: { name: "testers" },
      spec: { users: ["kim"] },
    });
    await post(`${API}/projects`, {
      apiVersion: V1,
      kind: "Project",
      metadata: { name: "team-k" },
      spec: { members: [{ kind: "Team", name: "testers", clusterRole: "edit" }] },
    });
    const ingress = (host: string, enabled = true) => ({ template: { accessPoint: { ingress: { enabled, host } } } });
    for (const [name, spec] of [
      ["vc-in", ingress("vc-in.example.test:8443")],
      ["other", ingress("other.example.test")],
      ["no-ingress", {}],
      ["disabled", ingress("disabled.example.test", false)],
    ] as const) {
      await post(INSTANCES, { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name }, spec });
    }
    const reported = await client.send("PATCH", `${INSTANCES}/vc-in/status`, {
      token: admin,
      body: { status: { serverCertificateAuthority: SERVING_CA, online: true } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reported.status, 200, reported.body);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("token form: a complete kubeconfig for https://<ingress host> that trusts the reported serving CA", async () => {
    const reply = await request(kim, "vc-in", {});
    assert.equal(reply.status, 201, reply.body);
    const body = reply.json();
    assert.equal(body.kind, "VirtualClusterInstanceKubeConfig");
    assert.equal(body.apiVersion, V1);
    assert.deepEqual(body.metadata, { name: "vc-in", namespace: NS });
    const config = await parse(body.status.kubeConfig);
    assert.match(body.status.kubeConfig, /^apiVersion: v1\nkind: Config\n/);
    const name = "virtualcluster_vc-in_team-k";
    assert.equal(config["current-context"], name);
    assert.deepEqual(config.contexts, [{ name, context: { cluster: name, user: name } }]);
    assert.equal(config.clusters.length, 1);
    assert.equal(config.clusters[0].cluster.server, "https://vc-in.example.test:8443");
    const caData = config.clusters[0].cluster["certificate-authority-data"] ?? "";
    assert.equal(Buffer.from(caData, "base64").toString(), SERVING_CA);
    assert.equal(config.users.length, 1);
    assert.ok((config.users[0].user.token ?? "").length >= 32);
  });

  it("token form: the key is the caller's, listed with its keys, scoped to this virtual cluster, usable and revocable", async () => {
    const reply = await request(kim, "vc-in");
    assert.equal(reply.status, 201, reply.body);
    const name = reply.json().status.accessKey as string;
    const token = (await parse(reply.json().status.kubeConfig)).users[0].user.token ?? "";
    const stored = (await key(name)).json();
    assert.equal(stored.spec.user, "kim");
    assert.equal(stored.spec.type, "User");
    assert.equal(stored.spec.ttl, 86_400, "one day when certificateTTL is omitted");
    assert.deepEqual(stored.spec.scope, { virtualClusters: [{ project: "team-k", virtualCluster: "vc-in" }] });
    assert.match(stored.spec.displayName, /Kubeconfig of virtual cluster vc-in \(project team-k\)/);
    assert.equal(stored.spec.key, undefined, "the key is never shown again");
    const mine = (await client.send("GET", `${API}/ownedaccesskeys`, { token: kim })).json();
    assert.ok(mine.items.some((k: { metadata: { name: string } }) => k.metadata.name === name));
    const listed = (await client.send("GET", `${API}/users/kim/accesskeys`, { token: kim })).json();
    assert.ok(listed.accessKeys.some((k: { metadata: { name: string } }) => k.metadata.name === name));

    assert.equal((await client.send("GET", `${INSTANCES}/vc-in`, { token })).status, 200);
    const outside = await client.send("GET", `${INSTANCES}/other`, { token });
    assert.equal(outside.status, 403, "the key reaches this one virtual cluster only");
    assert.equal((await client.send("DELETE", `${API}/ownedaccesskeys/${name}`, { token: kim })).status, 200);
    assert.equal((await client.send("GET", `${INSTANCES}/vc-in`, { token })).status, 401);
  });

  it("certificateTTL: 0 means one year, a number its seconds, a negative number 422", async () => {
    for (const [ttl, expected] of [
      [0, 31_536_000],
      [600, 600],
    ]) {
      const reply = await request(kim, "vc-in", { certificateTTL: ttl });
      assert.equal(reply.status, 201, reply.body);
      assert.equal((await key(reply.json().status.accessKey)).json().spec.ttl, expected, `certificateTTL ${ttl}`);
    }
    const negative = await request(kim, "vc-in", { certificateTTL: -5 });
    assert.equal(negative.status, 422);
    assert.equal(
      negative.json().message,
      'VirtualClusterInstanceKubeConfig.management.platform.sh "vc-in" is invalid: spec.certificateTTL: Invalid value: -5: must be 0 (the signing default of one year) or a positive number of seconds',
    );
  });

  it("clientCert: a fresh key pair and a certificate from the instance's client CA with the caller's name and groups", async () => {
    const keysBefore = (await client.send("GET", `${API}/ownedaccesskeys`, { token: kim })).json().items.length;
    const reply = await request(kim, "vc-in", { clientCert: true, certificateTTL: 3600 });
    assert.equal(reply.status, 201, reply.body);
    assert.equal(reply.json().status.accessKey, undefined);
    const config = await parse(reply.json().status.kubeConfig);
    assert.equal(config.users[0].name, "virtualcluster");
    assert.equal(config.contexts[0].context.user, "virtualcluster");
    const certPem = Buffer.from(config.users[0].user["client-certificate-data"] ?? "", "base64").toString();
    const keyPem = Buffer.from(config.users[0].user["client-key-data"] ?? "", "base64").toString();
    const instance = (await client.send("GET", `${INSTANCES}/vc-in`, { token: kim })).json();
    const caPem = instance.status.clientCertificateAuthority as string;

    const cert = new x509.X509Certificate(certPem);
    const ca = new x509.X509Certificate(caPem);
    assert.equal(cert.subjectName.getField("CN")[0], "kim");
    assert.deepEqual(cert.subjectName.getField("O").sort(), ["devs", "qa", "testers"]);
    assert.equal(cert.issuer, ca.subject);
    assert.ok(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }), "signed by the instance's CA");
    const lifetime = (cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000;
    assert.equal(lifetime, 3600 + 60, "the asked lifetime plus the backdated minute");
    assert.ok(cert.notBefore.getTime() <= Date.now() && cert.notAfter.getTime() > Date.now());
    assert.ok(new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem)), "the key pair matches");
    const keysAfter = (await client.send("GET", `${API}/ownedaccesskeys`, { token: kim })).json().items.length;
    assert.equal(keysAfter, keysBefore, "no access key is made for a certificate");

    if (opensslAvailable) {
      await writeFile(join(dir, "ca.pem"), caPem);
      await writeFile(join(dir, "client.pem"), certPem);
      const { stdout } = await run("openssl", [
        "verify",
        "-purpose",
        "sslclient",
        "-CAfile",
        join(dir, "ca.pem"),
        join(dir, "client.pem"),
      ]);
      assert.match(stdout, /client\.pem: OK/);
    }
    const defaultLife = await request(kim, "vc-in", { clientCert: true });
    const cfg = await parse(defaultLife.json().status.kubeConfig);
    const dayCert = new x509.X509Certificate(
      Buffer.from(cfg.users[0].user["client-certificate-data"] ?? "", "base64").toString(),
    );
    assert.equal((dayCert.notAfter.getTime() - dayCert.notBefore.getTime()) / 1000, 86_400 + 60);
  });

  it("the ingress rule: no enabled ingress host, no kubeconfig (spec.server does not replace it); spec.server overrides the address", async () => {
    for (const instance of ["no-ingress", "disabled"]) {
      for (const spec of [{}, { server: "https://elsewhere.example.test" }]) {
        const reply = await request(kim, instance, spec);
        assert.equal(reply.status, 400, `${instance} ${JSON.stringify(spec)}`);
        assert.match(
          reply.json().message,
          new RegExp(
            `virtual cluster instance "${instance}" in project "team-k" has no ingress access point, so it serves no kubeconfig: set spec.template.accessPoint.ingress.enabled to true and spec.template.accessPoint.ingress.host`,
          ),
        );
      }
    }
    const overridden = await request(kim, "other", { server: "https://lb.example.test:6443", clientCert: true });
    assert.equal(overridden.status, 201, overridden.body);
    const config = await parse(overridden.json().status.kubeConfig);
    assert.equal(config.clusters[0].cluster.server, "https://lb.example.test:6443");
    assert.equal(config.clusters[0].cluster["certificate-authority-data"], undefined, "no serving CA reported yet");
    const plain = await request(kim, "other", { server: "http://lb.example.test" });
    assert.equal(plain.status, 422);
    assert.match(plain.json().message, /spec\.server: Invalid value: "http:\/\/lb\.example\.test": must use https/);
  });

  it("a non-member gets no kubeconfig; a missing instance is 404", async () => {
    const denied = await request(nobody, "vc-in", {});
    assert.equal(denied.status, 403);
    assert.match(denied.json().message, /user "nobody" is not a member of project "team-k"/);
    const missing = await request(kim, "ghost", {});
    assert.equal(missing.status, 404);
  });

  it("deleting the instance revokes the keys of its kubeconfigs", async () => {
    const reply = await request(kim, "other", {});
    const name = reply.json().status.accessKey as string;
    assert.equal((await key(name)).status, 200);
    assert.equal((await client.send("DELETE", `${INSTANCES}/other`, { token: kim })).status, 200);
    await eventually(async () => (await key(name)).status === 404, "the kubeconfig's key revoked");
  });

  it("no credential of a kubeconfig reaches the audit log or the platform's output", async () => {
    assert.ok(issued.length >= 6);
    const auditDir = join(dir, "audit");
    let text = "";
    await eventually(async () => {
      text = "";
      for (const file of await readdir(auditDir).catch(() => [] as string[])) {
        text += await readFile(join(auditDir, file), "utf8");
      }
      return text.includes("/kubeconfig");
    }, "the kubeconfig requests in the audit log");
    const events = text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((event) => event.objectRef?.subresource === "kubeconfig");
    assert.ok(events.length > 0, "kubeconfig requests are audited");
    for (const event of events) {
      assert.equal(event.level, "Metadata");
      assert.equal(event.responseObject, undefined);
    }
    for (const document of issued) {
      const config = (await import("yaml")).parse(document) as Kubeconfig;
      const user = config.users[0].user;
      for (const secret of [user.token, user["client-key-data"], user["client-certificate-data"]]) {
        if (!secret) continue;
        assert.equal(text.includes(secret), false, "a credential is in the audit log");
        assert.equal(output().includes(secret), false, "a credential is in the platform's output");
      }
    }
    assert.doesNotMatch(text + output(), /PRIVATE KEY/);
  });
});
