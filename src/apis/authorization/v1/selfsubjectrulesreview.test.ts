import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import type { Authorizer, SubjectRules, UserInfo } from "../../../registry/types.ts";
import { selfSubjectRulesReviewDefinition } from "./selfsubjectrulesreview.ts";

const RULES: SubjectRules = {
  resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["tls"] }],
  nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
  incomplete: false,
};

async function review(spec: unknown, authorizer: Authorizer) {
  const context = testContext({ user: { name: "bob", groups: ["system:authenticated"] }, authorizer });
  const body = { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec };
  const action = selfSubjectRulesReviewDefinition.action;
  assert.ok(action);
  return action.handle({ context, body: body as unknown as KubeObject });
}

describe("selfSubjectRulesReviewDefinition", () => {
  it("selfSubjectRulesReviewDefinition answers the authorizer's rules for the caller and namespace", async () => {
    const asked: [UserInfo, string][] = [];
    const authorizer: Authorizer = {
      authorize: async () => ({ allowed: false }),
      rulesFor: async (user, namespace) => {
        asked.push([user, namespace]);
        return RULES;
      },
    };
    const answer = await review({ namespace: "ops" }, authorizer);
    assert.deepEqual(asked, [[{ name: "bob", groups: ["system:authenticated"] }, "ops"]]);
    assert.deepEqual(answer, {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectRulesReview",
      metadata: { creationTimestamp: null },
      spec: { namespace: "ops" },
      status: { ...RULES },
    });
  });

  it("selfSubjectRulesReviewDefinition says so when the authorizer cannot list rules", async () => {
    const answer = await review({ namespace: "default" }, { authorize: async () => ({ allowed: true }) });
    assert.deepEqual(answer.status, {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: "this server's authorizer cannot list rules",
    });
  });

  it("selfSubjectRulesReviewDefinition needs a namespace, as upstream", async () => {
    const authorizer: Authorizer = { authorize: async () => ({ allowed: true }), rulesFor: async () => RULES };
    for (const spec of [{}, { namespace: "" }, undefined]) {
      const error = await statusErrorOf(review(spec, authorizer));
      assert.equal(error.code, 400);
      assert.match(error.message, /^no namespace on request/);
    }
  });

  it("selfSubjectRulesReviewDefinition reads kubectl's protobuf", () => {
    assert.deepEqual(selfSubjectRulesReviewDefinition.protobuf, {
      message: "k8s.io.api.authorization.v1.SelfSubjectRulesReview",
    });
  });
});
