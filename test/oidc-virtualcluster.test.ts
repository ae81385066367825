// A virtual cluster whose API server trusts the platform's OpenID provider (controlPlane.apiServer.oidc): kubectl
// with an ID token the platform issued reaches it as the platform user, with the user's teams as groups, and the
// virtual cluster's RBAC decides what that user may do. Real processes over HTTPS: the platform, a host API server,
// `virtualcluster run`, kubectl.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { OidcRelyingParties } from "./support/oidc-relying-party.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { setPlatformConfig } from "./support/sso-platform.ts";

const KUBERNETES = { id: "kubernetes", secret: "kubernetes-client-s3cret", redirect: "http://127.0.0.1:8000/callback" };
const OTHER = { id: "grafana", secret: "grafana-client-s3cret", redirect: "https://grafana.example.test/cb" };

describe("a virtual cluster authenticating the platform's ID tokens", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let runtime: RuntimeProcess;
  let api: AuthClient;
  let rps: OidcRelyingParties;
  let admin: Kubectl;

  before(async () => {
    platform = await startPlatformProcess();
    api = new AuthClient(platform.url, platform.caPem);
    rps = new OidcRelyingParties(platform, api);
    await api.createUser(platform.adminKey, "alice", { username: "alice", displayName: "Alice Example" });
    assert.equal((await api.setPassword(platform.adminKey, "alice", "alice-password-1")).status, 201);
    await api.createTeam(platform.adminKey, "dev", { users: ["alice"] });
    await setPlatformConfig(
      platform,
      `oidc:
  clients:
  - {name: Kubernetes, clientId: ${KUBERNETES.id}, clientSecret: ${KUBERNETES.secret}, redirectURIs: ['${KUBERNETES.redirect}']}
  - {name: Grafana, clientId: ${OTHER.id}, clientSecret: ${OTHER.secret}, redirectURIs: ['${OTHER.redirect}']}
`,
    );

    host = await startClusterApiServerProcess();
    await new Kubectl(host.kubeconfig).ok(["create", "namespace", "vc-oidc"]);
    const caFile = join(host.dataDir, "platform-ca.pem");
    await writeFile(caFile, platform.caPem);
    runtime = await startRuntimeProcess({
      name: "oidc",
      namespace: "vc-oidc",
      hostKubeconfig: host.kubeconfig,
      settings: `controlPlane:
  apiServer:
    oidc:
      issuerURL: ${rps.issuer()}
      clientID: ${KUBERNETES.id}
      usernameClaim: preferred_username
      usernamePrefix: "-"
      groupsClaim: groups
      groupsPrefix: "platform:"
      caFile: ${caFile}
`,
    });
    admin = new Kubectl(runtime.kubeconfig);
  });
  after(async () => {
    api?.close();
    await runtime?.stop();
    await host?.stop();
    await platform?.stop();
  });

  async function idToken(clientId: string, secret: string, redirect: string, user = "alice"): Promise<string> {
    const rp = await rps.relyingParty(clientId, secret);
    const browser = await rps.signedIn(user, `${user}-password-1`);
    const tokens = await rps.codeFlow(browser, rp, redirect);
    assert.ok(tokens.id_token);
    return tokens.id_token;
  }

  it("kubectl with the platform's ID token is the platform user, and RBAC of the virtual cluster decides", async () => {
    const token = await idToken(KUBERNETES.id, KUBERNETES.secret, KUBERNETES.redirect);
    const before = await admin.run(["--token", token, "get", "services", "-n", "default"]);
    assert.notEqual(before.code, 0);
    assert.match(before.stderr, /User "alice" cannot list resource "services"/);

    await admin.ok(["create", "clusterrolebinding", "platform-dev-view", "--clusterrole=view", "--group=platform:dev"]);
    const listed = await admin.ok(["--token", token, "get", "services", "-n", "default", "-o", "name"]);
    assert.match(listed, /service\/kubernetes/);
    const write = await admin.run(["--token", token, "create", "configmap", "nope", "-n", "default"]);
    assert.notEqual(write.code, 0);
    assert.match(write.stderr, /User "alice" cannot create resource "configmaps"/);
  });

  it("usernameClaim email: an address the user set is refused, one an admin verified names the user", async () => {
    await api.createUser(platform.adminKey, "bob", { username: "bob" });
    assert.equal((await api.setPassword(platform.adminKey, "bob", "bob-password-1")).status, 201);
    const bobKey = (await api.login("bob", "bob-password-1")).json().accessKey;
    const setEmail = (token: string, user: string, spec: Record<string, unknown>) =>
      api.send("PATCH", `/apis/management.platform.sh/v1/users/${user}`, {
        token,
        body: { spec },
        contentType: "application/merge-patch+json",
      });
    // bob claims the address of a colleague (his own right: it is only unverified).
    assert.equal((await setEmail(bobKey, "bob", { email: "alice@corp.example" })).status, 200);
    assert.equal(
      (await setEmail(platform.adminKey, "alice", { email: "alice@corp.example", verifiedEmail: "alice@corp.example" }))
        .status,
      200,
    );
    const caFile = join(host.dataDir, "platform-ca.pem");
    await new Kubectl(host.kubeconfig).ok(["create", "namespace", "vc-oidc-email"]);
    const byEmail = await startRuntimeProcess({
      name: "oidc-email",
      namespace: "vc-oidc-email",
      hostKubeconfig: host.kubeconfig,
      settings: `controlPlane:\n  apiServer:\n    oidc:\n      issuerURL: ${rps.issuer()}\n      clientID: ${KUBERNETES.id}\n      usernameClaim: email\n      caFile: ${caFile}\n`,
    });
    try {
      const kubectl = new Kubectl(byEmail.kubeconfig);
      await kubectl.ok([
        "create",
        "clusterrolebinding",
        "alice-view",
        "--clusterrole=view",
        "--user=alice@corp.example",
      ]);
      const bobToken = await idToken(KUBERNETES.id, KUBERNETES.secret, KUBERNETES.redirect, "bob");
      const refused = await kubectl.run(["--token", bobToken, "get", "services", "-n", "default"]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /Unauthorized|must be logged in/);
      const aliceToken = await idToken(KUBERNETES.id, KUBERNETES.secret, KUBERNETES.redirect);
      const listed = await kubectl.ok(["--token", aliceToken, "get", "services", "-n", "default", "-o", "name"]);
      assert.match(listed, /service\/kubernetes/);
    } finally {
      await byEmail.stop();
    }
  });

  it("an ID token for another client, or a tampered one, is refused (401)", async () => {
    const other = await idToken(OTHER.id, OTHER.secret, OTHER.redirect);
    const refused = await admin.run(["--token", other, "get", "services", "-n", "default"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized|must be logged in/);

    const token = await idToken(KUBERNETES.id, KUBERNETES.secret, KUBERNETES.redirect);
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, preferred_username: "admin" })).toString("base64url");
    const tampered = await admin.run([
      "--token",
      `${header}.${forged}.${signature}`,
      "get",
      "services",
      "-n",
      "default",
    ]);
    assert.notEqual(tampered.code, 0);
    assert.match(tampered.stderr, /Unauthorized|must be logged in/);
  });
});
