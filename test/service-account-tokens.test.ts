// ServiceAccount tokens on the cluster API server over HTTPS: TokenRequest (client-node and `kubectl create token`),
// the identity a token carries, RBAC deciding what it may do, and tokens that stop working.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  ApiException,
  AuthenticationV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";
import { startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { kubeConfig } from "./support/kube-objects.ts";
import { Kubectl, kubectlAvailable } from "./support/kubectl.ts";

type Server = Awaited<ReturnType<typeof startClusterApiServer>>;

const code = async (call: () => Promise<unknown>): Promise<number> => {
  try {
    await call();
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
};

describe("ServiceAccount tokens", () => {
  let dir: string;
  let server: Server;
  let admin: KubeConfig;
  let core: CoreV1Api;

  const asToken = (token: string) => {
    const config = new KubeConfig();
    const cluster = admin.getCurrentCluster()!;
    config.loadFromOptions({
      clusters: [cluster],
      users: [{ name: "sa", token }],
      contexts: [{ name: "sa", cluster: cluster.name, user: "sa" }],
      currentContext: "sa",
    });
    return config;
  };
  const tokenFor = async (name: string, expirationSeconds = 3600) =>
    (
      await core.createNamespacedServiceAccountToken({
        namespace: "default",
        name,
        body: { spec: { audiences: [], expirationSeconds } },
      })
    ).status?.token ?? "";

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-sa-tokens-"));
    server = await startClusterApiServer({ dataDir: dir, host: "127.0.0.1", port: 0, name: "host" });
    admin = kubeConfig(server.kubeconfigPath);
    core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: "default", body: { metadata: { name: "syncer" } } });
  });
  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("TokenRequest issues a token that authenticates as the ServiceAccount, with only what RBAC grants", async () => {
    const token = await tokenFor("syncer");
    assert.equal(token.split(".").length, 3, "a JWT");
    const config = asToken(token);
    const review = await config.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    assert.equal(review.status?.userInfo?.username, "system:serviceaccount:default:syncer");
    assert.deepEqual(review.status?.userInfo?.groups, [
      "system:serviceaccounts",
      "system:serviceaccounts:default",
      "system:authenticated",
    ]);
    const saCore = config.makeApiClient(CoreV1Api);
    assert.equal(await code(() => saCore.listNamespacedSecret({ namespace: "default" })), 403);

    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: "default",
      body: {
        metadata: { name: "secret-reader" },
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: "default",
      body: {
        metadata: { name: "secret-reader" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "secret-reader" },
        subjects: [{ kind: "ServiceAccount", name: "syncer", namespace: "default" }],
      },
    });
    assert.equal(await code(() => saCore.listNamespacedSecret({ namespace: "default" })), 200);
    assert.equal(await code(() => saCore.listNamespacedSecret({ namespace: "kube-system" })), 403);
  });

  it("refuses a too short expiration, a forged token, and tokens of a deleted ServiceAccount", async () => {
    assert.equal(await code(() => tokenFor("syncer", 60)), 400);
    assert.equal(await code(() => tokenFor("nobody")), 404);
    const token = await tokenFor("syncer");
    const [header, payload] = token.split(".");
    const forged = `${header}.${payload}.${Buffer.from("not the signature").toString("base64url")}`;
    const forgedCore = asToken(forged).makeApiClient(CoreV1Api);
    assert.equal(await code(() => forgedCore.listNamespacedSecret({ namespace: "default" })), 401);

    const saCore = asToken(token).makeApiClient(CoreV1Api);
    await core.deleteNamespacedServiceAccount({ namespace: "default", name: "syncer" });
    assert.equal(await code(() => saCore.listNamespacedSecret({ namespace: "default" })), 401);
    // A new ServiceAccount of the same name does not revive the old tokens.
    await core.createNamespacedServiceAccount({ namespace: "default", body: { metadata: { name: "syncer" } } });
    assert.equal(await code(() => saCore.listNamespacedSecret({ namespace: "default" })), 401);
  });

  it("kubectl create token works against it", { skip: !kubectlAvailable && "kubectl is not installed" }, async () => {
    const kubectl = new Kubectl(server.kubeconfigPath);
    const token = (await kubectl.ok(["create", "token", "syncer", "--duration", "20m"])).trim();
    const review = await asToken(token).makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    assert.equal(review.status?.userInfo?.username, "system:serviceaccount:default:syncer");
  });
});
