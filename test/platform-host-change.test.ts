// Changing the platform's address keeps connected virtual clusters working (issue 30 item 10), over real processes
// and HTTPS: a virtual cluster connected to the platform by address verifies direct cluster endpoint tokens by the
// platform's key (its JWKS), and accepts the old and the new issuer when an admin sets platformHost. Before, the
// issuer of new tokens followed platformHost and the virtual cluster refused every one of them.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { createAccessKey, VIRTUALCLUSTER_SCOPE } from "./support/platform-objects.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const NEW_HOST = "platform.example.test";

describe("a platformHost change and connected virtual clusters", { skip: kubectlSkip, timeout: 300_000 }, () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let client: AuthClient;
  let vc: RuntimeProcess;
  let vcctl: Kubectl;

  const endpointToken = async () => {
    const reply = await client.send("POST", `${API}/directclusterendpointtokens`, {
      token: platform.adminKey,
      body: { apiVersion: V1, kind: "DirectClusterEndpointToken", spec: { ttl: 600 } },
    });
    assert.equal(reply.status, 201, reply.body);
    const token: string = reply.json().status.token;
    const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
    return { token, issuer: claims.iss as string };
  };
  const getsIn = async (token: string) => {
    const run = await vcctl.run(["--token", token, "get", "namespaces", "-o", "name"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /namespace\/default/);
  };

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    client = new AuthClient(platform.url, platform.caPem);
    const hostctl = new Kubectl(host.kubeconfig);
    await hostctl.ok(["create", "namespace", "team-host"]);
    const key = await createAccessKey(client, platform, "host-change-vc", VIRTUALCLUSTER_SCOPE);
    await hostctl.ok(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "virtualcluster-platform-api-key", namespace: "team-host" },
        // Connected by address: the platform's own host:port.
        stringData: { accessKey: key, host: new URL(platform.url).host, certificateAuthorityData: platform.caPem },
      }),
    );
    vc = await startRuntimeProcess({
      name: "moved",
      namespace: "team-host",
      settings: "external:\n  platform: {}\n",
      hostKubeconfig: host.kubeconfig,
      // The platform's heartbeat (30 s): the change is learnt when a token needs it, not at the next heartbeat.
      heartbeatSeconds: null,
    });
    vcctl = new Kubectl(vc.kubeconfig);
    await waitFor(async () => (await vc.status()).platform?.connected === true, "the platform connection");
  });
  after(async () => {
    client?.close();
    await vc?.stop();
    await Promise.all([platform?.stop(), host?.stop()]);
  });

  it("tokens signed before and after platformHost changes both get in, verified by the platform's key", async () => {
    const before = await endpointToken();
    assert.equal(before.issuer, `https://${new URL(platform.url).host}`);
    await getsIn(before.token);

    const changed = await client.send("PATCH", `${API}/configs/platform-config`, {
      token: platform.adminKey,
      contentType: "application/merge-patch+json",
      body: { spec: { raw: `platformHost: ${NEW_HOST}\n` } },
    });
    assert.equal(changed.status, 200, changed.body);
    let after = await endpointToken();
    await waitFor(async () => {
      after = await endpointToken();
      return after.issuer === `https://${NEW_HOST}`;
    }, "tokens signed under the new platformHost");

    await getsIn(after.token);
    await getsIn(before.token);
    assert.equal((await vc.status()).platform?.connected, true, "the virtual cluster stays connected by address");
  });
});
