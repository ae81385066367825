import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { PassthroughCall } from "../../http/passthrough.ts";
import type { AuthorizationAttributes } from "../../registry/types.ts";
import { authorizeClusterRequest } from "./cluster-access.ts";
import { SpaceIndex } from "./space-index.ts";

const G = "management.platform.sh";
const spaces = new SpaceIndex();
spaces.reset([
  {
    key: `/${G}/spaceinstances/p-alpha/dev-space`,
    revision: 1,
    createRevision: 1,
    value: JSON.stringify({
      metadata: { name: "dev-space", namespace: "p-alpha" },
      spec: { clusterRef: { cluster: "c1", namespace: "alpha-dev" } },
    }),
  } as never,
]);

/** A caller allowed exactly the listed "verb resource/namespace/name" questions. */
function call(allowed: string[], headers: Record<string, string> = {}, method = "GET"): PassthroughCall {
  return {
    request: { method, headers } as unknown as IncomingMessage,
    url: "",
    user: { name: "bob", groups: [] },
    authorizer: {
      authorize: async (a: AuthorizationAttributes) => ({
        allowed: allowed.includes(`${a.verb} ${a.resource}/${a.namespace ?? ""}/${a.name ?? ""}`),
      }),
    },
  };
}

const refusal = async (promise: Promise<void>) => {
  try {
    await promise;
  } catch (error) {
    if (isStatusError(error)) return error;
    throw error;
  }
  return undefined;
};

describe("authorizeClusterRequest()", () => {
  it("authorizeClusterRequest() lets a caller who may use the cluster send anything (the host's RBAC decides)", async () => {
    const user = call(["use clusters//c1"]);
    assert.equal(
      await refusal(authorizeClusterRequest(user, "c1", "/api/v1/namespaces/kube-system/secrets", spaces)),
      undefined,
    );
    const error = await refusal(authorizeClusterRequest(user, "c2", "/api/v1/namespaces", spaces));
    assert.equal(error?.code, 403);
    assert.match(
      error?.message ?? "",
      /clusters\.management\.platform\.sh "c2" is forbidden: User "bob" cannot use the cluster/,
    );
  });

  it("authorizeClusterRequest() lets a space's member reach its namespace and discovery, nothing else", async () => {
    const member = call(["get spaceinstances/p-alpha/dev-space"]);
    for (const path of [
      "/api/v1/namespaces/alpha-dev/configmaps?watch=1",
      "/api",
      "/apis/rbac.authorization.k8s.io/v1",
      "/version",
    ]) {
      assert.equal(await refusal(authorizeClusterRequest(member, "c1", path, spaces)), undefined, path);
    }
    for (const path of ["/api/v1/namespaces/other/configmaps", "/api/v1/namespaces", "/api/v1/nodes", "/metrics"]) {
      assert.equal((await refusal(authorizeClusterRequest(member, "c1", path, spaces)))?.code, 403, path);
    }
    assert.equal(
      (await refusal(authorizeClusterRequest(member, "c2", "/api/v1/namespaces/alpha-dev/pods", spaces)))?.code,
      403,
    );
    assert.equal(
      (await refusal(authorizeClusterRequest(call([]), "c1", "/api", spaces)))?.code,
      403,
      "no space, no discovery",
    );
  });

  it("authorizeClusterRequest() refuses Impersonate-* headers whatever the caller may do", async () => {
    for (const header of ["impersonate-user", "impersonate-group", "impersonate-uid", "impersonate-extra-scopes"]) {
      const error = await refusal(
        authorizeClusterRequest(call(["use clusters//c1"], { [header]: "x" }), "c1", "/api", spaces),
      );
      assert.equal(error?.code, 403, header);
      assert.match(error?.message ?? "", new RegExp(`the header ${header} is not accepted through the platform`));
    }
  });
});
