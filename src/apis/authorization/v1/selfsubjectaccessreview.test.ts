import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, AuthorizationDecision, ResourceDefinition } from "../../../registry/types.ts";
import { selfSubjectAccessReviewDefinition as platformReview } from "../../management/v1/selfsubjectaccessreview.ts";
import { selfSubjectAccessReviewDefinition as clusterReview } from "./selfsubjectaccessreview.ts";

/** Sends `spec` to the review; returns the answer and the attributes the authorizer was asked about. */
async function review(
  definition: ResourceDefinition,
  spec: unknown,
  decision: AuthorizationDecision = { allowed: true },
) {
  const asked: AuthorizationAttributes[] = [];
  const context = testContext({
    user: { name: "bob", groups: ["system:authenticated"] },
    authorizer: {
      authorize: async (attributes) => {
        asked.push(attributes);
        return decision;
      },
    },
  });
  const body = { apiVersion: `${definition.group}/${definition.version}`, kind: "SelfSubjectAccessReview", spec };
  const action = definition.action;
  assert.ok(action);
  const answer = await action.handle({ context, body: body as unknown as KubeObject });
  return { answer, asked };
}

const servings: [string, ResourceDefinition][] = [
  ["authorization.k8s.io/v1", clusterReview],
  ["management.platform.sh/v1", platformReview],
];

for (const [served, definition] of servings) {
  describe(`createSelfSubjectAccessReviewDefinition() served as ${served}`, () => {
    it("createSelfSubjectAccessReviewDefinition() asks what kubectl auth can-i sends, subresource and all", async () => {
      // kubectl sends every string field, the unused ones empty.
      const spec = {
        resourceAttributes: {
          namespace: "default",
          verb: "get",
          group: "",
          version: "",
          resource: "secrets",
          subresource: "status",
          name: "",
        },
      };
      const { answer, asked } = await review(definition, spec);
      assert.deepEqual(asked, [
        {
          user: { name: "bob", groups: ["system:authenticated"] },
          resourceRequest: true,
          verb: "get",
          resource: "secrets",
          group: "",
          namespace: "default",
          subresource: "status",
        },
      ]);
      assert.deepEqual(answer, {
        apiVersion: served,
        kind: "SelfSubjectAccessReview",
        metadata: { creationTimestamp: null },
        spec,
        status: { allowed: true },
      });
    });

    it("createSelfSubjectAccessReviewDefinition() passes group, version and name when given", async () => {
      const spec = {
        resourceAttributes: { verb: "delete", group: "apps", version: "v1", resource: "deployments", name: "web" },
      };
      const { asked } = await review(definition, spec);
      assert.equal(asked[0].group, "apps");
      assert.equal(asked[0].version, "v1");
      assert.equal(asked[0].name, "web");
      assert.equal(asked[0].namespace, undefined);
    });

    it("createSelfSubjectAccessReviewDefinition() asks about a non-resource path", async () => {
      const { answer, asked } = await review(definition, { nonResourceAttributes: { path: "/healthz", verb: "get" } });
      assert.deepEqual(asked, [
        {
          user: { name: "bob", groups: ["system:authenticated"] },
          resourceRequest: false,
          verb: "get",
          path: "/healthz",
        },
      ]);
      assert.deepEqual(answer.status, { allowed: true });
    });

    it("createSelfSubjectAccessReviewDefinition() answers a refusal as denied, with the authorizer's reason", async () => {
      const spec = { resourceAttributes: { verb: "list", resource: "users" } };
      const why = "the access key's scope does not allow it";
      const denied = await review(definition, spec, { allowed: false, reason: why });
      assert.deepEqual(denied.answer.status, { allowed: false, denied: true, reason: why });
      const bare = await review(definition, spec, { allowed: false });
      assert.deepEqual(bare.answer.status, { allowed: false, denied: true }, "no empty reason");
      const allowed = await review(definition, spec, { allowed: true, reason: "a binding allows it" });
      assert.deepEqual(allowed.answer.status, { allowed: true, reason: "a binding allows it" });
    });

    it("createSelfSubjectAccessReviewDefinition() needs exactly one of resourceAttributes and nonResourceAttributes", async () => {
      const neither = await statusErrorOf(review(definition, {}));
      assert.equal(neither.code, 422);
      assert.equal(
        neither.message,
        `SelfSubjectAccessReview.${definition.group} "" is invalid: spec.resourceAttributes: Invalid value: null: ` +
          "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      );
      const both = await statusErrorOf(
        review(definition, {
          resourceAttributes: { verb: "get", resource: "pods" },
          nonResourceAttributes: { path: "/healthz", verb: "get" },
        }),
      );
      assert.equal(both.code, 422);
      assert.match(
        both.message,
        /spec\.nonResourceAttributes: Invalid value: .*: cannot be specified in combination with resourceAttributes$/,
      );
      assert.equal((await statusErrorOf(review(definition, undefined))).code, 422, "no spec at all");
    });

    it("createSelfSubjectAccessReviewDefinition() names every missing field in one 422", async () => {
      const resource = await statusErrorOf(review(definition, { resourceAttributes: { namespace: "default" } }));
      assert.equal(resource.code, 422);
      assert.deepEqual(
        resource.status.details?.causes?.map((c) => `${c.field} ${c.reason}`),
        ["spec.resourceAttributes.verb FieldValueRequired", "spec.resourceAttributes.resource FieldValueRequired"],
      );
      const path = await statusErrorOf(review(definition, { nonResourceAttributes: { verb: 7 } }));
      assert.deepEqual(
        path.status.details?.causes?.map((c) => `${c.field} ${c.reason}`),
        ["spec.nonResourceAttributes.verb FieldValueRequired", "spec.nonResourceAttributes.path FieldValueRequired"],
      );
    });
  });
}

describe("selfSubjectAccessReviewDefinition", () => {
  it("selfSubjectAccessReviewDefinition reads kubectl's protobuf only in authorization.k8s.io", () => {
    assert.deepEqual(clusterReview.protobuf, { message: "k8s.io.api.authorization.v1.SelfSubjectAccessReview" });
    assert.equal(platformReview.protobuf, undefined);
    assert.equal(platformReview.group, "management.platform.sh");
    assert.equal(platformReview.action?.schema, clusterReview.action?.schema, "one schema");
  });
});
