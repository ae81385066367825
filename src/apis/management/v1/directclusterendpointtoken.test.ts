import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import {
  createDirectClusterEndpointTokenDefinition,
  DEFAULT_TOKEN_TTL_SECONDS,
  type EndpointTokenRequest,
  MAX_TOKEN_TTL_SECONDS,
} from "./directclusterendpointtoken.ts";

function setup(maxTTL = 0) {
  const requests: EndpointTokenRequest[] = [];
  const definition = createDirectClusterEndpointTokenDefinition({
    issue: async (request) => {
      requests.push(request);
      return { token: "header.payload.signature", scope: request.scope };
    },
    maxTTLSeconds: () => maxTTL,
  });
  const create = async (body: unknown) => {
    const context = testContext();
    const response = await definition.action!.handle({ context, body: body as KubeObject });
    return { response: response as KubeObject & { spec: Record<string, unknown>; status: { token: string } }, context };
  };
  return { requests, create };
}

const body = (spec: Record<string, unknown>) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "DirectClusterEndpointToken",
  metadata: {},
  spec,
});

describe("DirectClusterEndpointToken", () => {
  it("handle() answers the token in status and the effective ttl; ttl defaults to one hour", async () => {
    const { create, requests } = setup();
    const { response } = await create(body({}));
    assert.equal(response.kind, "DirectClusterEndpointToken");
    assert.equal(response.status.token, "header.payload.signature");
    assert.deepEqual(response.spec, { ttl: DEFAULT_TOKEN_TTL_SECONDS });
    assert.equal(requests[0].ttlSeconds, 3600);
    assert.equal((await create(undefined)).response.spec.ttl, 3600);
  });

  it("handle() refuses a ttl that is not a positive integer (422)", async () => {
    const { create } = setup();
    for (const ttl of [0, -5, 1.5, "60"]) {
      const error = await statusErrorOf(create(body({ ttl })));
      assert.equal(error.code, 422, `ttl ${ttl}`);
      assert.match(error.message, /spec\.ttl/);
    }
  });

  it("handle() reduces a ttl beyond the platform's maximum access key lifetime, with a warning", async () => {
    const { create, requests } = setup(600);
    const { response, context } = await create(body({ ttl: 7200 }));
    assert.equal(response.spec.ttl, 600);
    assert.equal(requests[0].ttlSeconds, 600);
    assert.deepEqual(context.warnings, [
      "spec.ttl was reduced to the platform's maximum access key lifetime of 600 seconds",
    ]);
    // The default is reduced too, silently: the client asked for nothing.
    const defaulted = await create(body({}));
    assert.equal(defaulted.response.spec.ttl, 600);
    assert.deepEqual(defaulted.context.warnings, []);
  });

  it("handle() bounds every ttl by the maximum token lifetime", async () => {
    const { create } = setup();
    const { response, context } = await create(body({ ttl: MAX_TOKEN_TTL_SECONDS + 1 }));
    assert.equal(response.spec.ttl, MAX_TOKEN_TTL_SECONDS);
    assert.match(context.warnings[0], /maximum token lifetime/);
  });

  it("handle() validates the scope like an access key's and passes it on in canonical form", async () => {
    const { create, requests } = setup();
    const scope = { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] };
    const { response } = await create(body({ ttl: 60, scope }));
    assert.deepEqual(requests[0].scope, { roles: [{ role: "virtualcluster", projects: ["*"] }] });
    assert.deepEqual(response.spec.scope, { roles: [{ role: "virtualcluster", projects: ["*"] }] });
    const error = await statusErrorOf(create(body({ scope: { projects: "a" } })));
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.scope\.projects/);
  });

  it("handle() drops unknown fields with a warning and refuses another kind (400)", async () => {
    const { create } = setup();
    const { context } = await create(body({ ttl: 60, extra: true }));
    assert.deepEqual(context.warnings, ['unknown field "spec.extra"']);
    assert.equal((await statusErrorOf(create({ ...body({}), kind: "OwnedAccessKey" }))).code, 400);
    assert.equal((await statusErrorOf(create({ ...body({}), apiVersion: "management.platform.sh/v2" }))).code, 400);
  });
});
