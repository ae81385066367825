import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StatusError } from "../apimachinery/errors.ts";
import { configMapDefinition } from "../apis/core/v1/configmap.ts";
import { testContext } from "../registry/testing.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { type BodyRequest, decodeRequestBody } from "./decode-request-body.ts";
import { kubectlFixtures } from "./protobuf/kubectl-fixtures.ts";
import { envelope, WireWriter } from "./protobuf/testing.ts";
import type { Query } from "./query-options.ts";
import { usersDefinition } from "./testing-definitions.ts";

const PROTOBUF = "application/vnd.kubernetes.protobuf";

function request(
  body: Buffer | undefined,
  options: { contentType?: string; query?: Query; subresource?: string; definition?: ResourceDefinition } = {},
): BodyRequest {
  return {
    info: { subresource: options.subresource ?? "" },
    store: { definition: options.definition ?? configMapDefinition },
    context: testContext(),
    query: options.query ?? {},
    contentType: "contentType" in options ? options.contentType : PROTOBUF,
    body,
  };
}

const configMapBody = Buffer.from(kubectlFixtures.configmap.hex, "hex");

/** A ConfigMap whose metadata carries field 99 (unknown) with a value. */
const withUnknownField = envelope(
  "v1",
  "ConfigMap",
  new WireWriter().bytes(1, new WireWriter().string(1, "c").uint(99, 1).finish()).finish(),
);

function statusOf(action: () => unknown): StatusError {
  try {
    action();
  } catch (error) {
    if (error instanceof StatusError) return error;
    throw error;
  }
  assert.fail("expected a StatusError");
}

describe("decodeRequestBody()", () => {
  it("decodeRequestBody() decodes protobuf for a resource that names its message", () => {
    assert.deepEqual(decodeRequestBody(request(configMapBody), "object"), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace: "default" },
      data: { color: "blue", size: "10" },
      binaryData: { blob: "AAH/YmluYXJ5" },
    });
    // Content-Type parameters and case do not matter.
    const upper = request(configMapBody, { contentType: "Application/Vnd.Kubernetes.Protobuf; charset=binary" });
    assert.equal((decodeRequestBody(upper, "object") as { kind: string }).kind, "ConfigMap");
  });

  it("decodeRequestBody() also decodes the resource's status subresource, not other subresources", () => {
    assert.equal(
      (decodeRequestBody(request(configMapBody, { subresource: "status" }), "object") as { kind: string }).kind,
      "ConfigMap",
    );
    const other = statusOf(() => decodeRequestBody(request(configMapBody, { subresource: "kubeconfig" }), "object"));
    assert.equal(other.code, 415);
  });

  it("decodeRequestBody() answers 415 for protobuf to a resource without a message, as before", () => {
    const error = statusOf(() => decodeRequestBody(request(configMapBody, { definition: usersDefinition }), "object"));
    assert.equal(error.code, 415);
    assert.match(error.message, /accepted media types include: application\/json, application\/yaml/);
  });

  it("decodeRequestBody() leaves JSON and YAML bodies to the codec", () => {
    const json = request(Buffer.from('{"kind":"ConfigMap"}'), { contentType: "application/json" });
    assert.deepEqual(decodeRequestBody(json, "object"), { kind: "ConfigMap" });
    const yaml = request(Buffer.from("kind: ConfigMap\n"), { contentType: "application/yaml" });
    assert.deepEqual(decodeRequestBody(yaml, "object"), { kind: "ConfigMap" });
    assert.equal(decodeRequestBody(request(undefined), "object"), undefined);
    assert.equal(decodeRequestBody(request(Buffer.alloc(0)), "object"), undefined);
  });

  it("decodeRequestBody() answers 400 for a protobuf body that does not decode", () => {
    const error = statusOf(() => decodeRequestBody(request(Buffer.from('{"kind":"ConfigMap"}')), "object"));
    assert.equal(error.code, 400);
    assert.match(error.message, /not valid Kubernetes protobuf: it does not start with the 4 bytes "k8s\\0"/);
  });

  it("decodeRequestBody() reports unknown fields per fieldValidation: Strict 400, Warn a warning, Ignore nothing", () => {
    const strict = statusOf(() =>
      decodeRequestBody(request(withUnknownField, { query: { fieldValidation: "Strict" } }), "object"),
    );
    assert.equal(strict.code, 400);
    assert.equal(
      strict.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field number 99 in "metadata"',
    );
    const warn = request(withUnknownField);
    assert.deepEqual(decodeRequestBody(warn, "object"), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
    });
    assert.deepEqual(warn.context.warnings, ['unknown field number 99 in "metadata"']);
    const ignore = request(withUnknownField, { query: { fieldValidation: "Ignore" } });
    decodeRequestBody(ignore, "object");
    assert.deepEqual(ignore.context.warnings, []);
  });

  it("decodeRequestBody() decodes DeleteOptions for any resource, as meta.k8s.io/v1 whatever group sent it", () => {
    const raw = new WireWriter().uint(1, 0).string(4, "Foreground").string(5, "All").finish();
    const body = envelope("rbac.authorization.k8s.io/v1", "DeleteOptions", raw);
    assert.deepEqual(decodeRequestBody(request(body, { definition: usersDefinition }), "delete"), {
      apiVersion: "meta.k8s.io/v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
      propagationPolicy: "Foreground",
      dryRun: ["All"],
    });
    const json = request(Buffer.from('{"kind":"DeleteOptions"}'), { contentType: "application/json" });
    assert.deepEqual(decodeRequestBody(json, "delete"), { kind: "DeleteOptions" });
  });

  it("decodeRequestBody() bounds protobuf bodies by their whole nesting, JSON inside them included", () => {
    /** A ConfigMap nested `levels` deep: its managedFields entry (4 levels down) holds the rest as fieldsV1. */
    const configMap = (levels: number) => {
      const inner = levels - 4;
      const fieldsV1 = `${'{"f:a":'.repeat(inner - 1)}{}${"}".repeat(inner - 1)}`;
      const entry = new WireWriter().string(1, "m").bytes(7, new WireWriter().string(1, fieldsV1).finish()).finish();
      const metadata = new WireWriter().string(1, "deep").bytes(17, entry).finish();
      return envelope("v1", "ConfigMap", new WireWriter().bytes(1, metadata).finish());
    };
    const decoded = decodeRequestBody(request(configMap(100)), "object") as { metadata: { name: string } };
    assert.equal(decoded.metadata.name, "deep");
    const beyond = statusOf(() => decodeRequestBody(request(configMap(101)), "object"));
    assert.equal(beyond.code, 400);
    assert.match(beyond.message, /^the request body is nested too deeply: objects and lists may nest at most 100/);
    const far = statusOf(() => decodeRequestBody(request(configMap(50_000)), "object"));
    assert.equal(far.code, 400);
    assert.match(far.message, /nested too deeply in the JSON of "metadata.managedFields\[0\].fieldsV1" at byte \d+/);
  });
});
