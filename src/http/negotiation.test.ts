import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import { negotiateOpenApiV2, negotiateResponse, parseAccept } from "./negotiation.ts";

const KUBECTL_GET =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

describe("negotiateResponse()", () => {
  it("negotiateResponse() answers JSON without an Accept header, for */* and application/json", () => {
    for (const accept of [undefined, "", "*/*", "application/json", "application/json, */*", "application/*"]) {
      assert.deepEqual(negotiateResponse(accept), { kind: "json" }, String(accept));
    }
  });

  it("negotiateResponse() picks the Table kubectl get asks for, only where tables are possible", () => {
    assert.deepEqual(negotiateResponse(KUBECTL_GET, { table: true }), { kind: "table", version: "v1" });
    assert.deepEqual(negotiateResponse(KUBECTL_GET, { table: false }), { kind: "json" });
    assert.deepEqual(negotiateResponse("application/json;as=Table;v=v1beta1;g=meta.k8s.io", { table: true }), {
      kind: "table",
      version: "v1beta1",
    });
  });

  it("negotiateResponse() serves YAML except for watch streams", () => {
    assert.deepEqual(negotiateResponse("application/yaml"), { kind: "yaml" });
    assert.deepEqual(negotiateResponse("application/yaml, application/json", { stream: true }), { kind: "json" });
    assert.throws(
      () => negotiateResponse("application/yaml", { stream: true }),
      (e: unknown) => isStatusError(e) && e.code === 406,
    );
  });

  it("negotiateResponse() follows q-values", () => {
    assert.deepEqual(negotiateResponse("application/json;q=0.5, application/yaml"), { kind: "yaml" });
    assert.deepEqual(negotiateResponse("application/yaml;q=0, application/json"), { kind: "json" });
  });

  it("negotiateResponse() answers 406 for media types it cannot serve", () => {
    for (const accept of [
      "text/html",
      "application/vnd.kubernetes.protobuf",
      "application/json;as=Table;g=meta.k8s.io;v=v9",
    ]) {
      assert.throws(
        () => negotiateResponse(accept, { table: true }),
        (e: unknown) =>
          isStatusError(e) && e.code === 406 && e.reason === "NotAcceptable" && /application\/json/.test(e.message),
        accept,
      );
    }
  });

  it("negotiateResponse() either answers a format or a 406 for any header, and JSON whenever JSON is listed", () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (header, table) => {
        try {
          negotiateResponse(header, { table });
        } catch (error) {
          assert.ok(isStatusError(error) && error.code === 406);
        }
        assert.notEqual(negotiateResponse(`${header.replace(/q=/g, "")},application/json`, { table }), undefined);
      }),
    );
  });
});

describe("parseAccept()", () => {
  it("parseAccept() lower-cases types and reads parameters", () => {
    assert.deepEqual(parseAccept('Application/JSON; as=Table ; v="v1"'), [
      { type: "application/json", params: { as: "Table", v: "v1" }, q: 1 },
    ]);
  });
});

describe("negotiateOpenApiV2()", () => {
  const PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

  it("negotiateOpenApiV2() answers protobuf to kubectl 1.27 and 1.28, JSON to everyone else", () => {
    assert.equal(negotiateOpenApiV2(PROTOBUF), "protobuf");
    assert.equal(negotiateOpenApiV2("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"), "protobuf");
    assert.equal(negotiateOpenApiV2(`application/json;q=0.5, ${PROTOBUF}`), "protobuf", "by preference");
    for (const accept of [undefined, "", "*/*", "application/json", `*/*, ${PROTOBUF}`, `${PROTOBUF};q=0, */*`]) {
      assert.equal(negotiateOpenApiV2(accept), "json", String(accept));
    }
  });

  it("negotiateOpenApiV2() refuses what it cannot serve with a 406 naming both forms", () => {
    let caught: unknown;
    try {
      negotiateOpenApiV2("application/vnd.kubernetes.protobuf");
    } catch (error) {
      caught = error;
    }
    assert.ok(isStatusError(caught));
    assert.equal(caught.code, 406);
    assert.match(caught.message, /application\/json, application\/yaml, application\/com\.github\.proto-openapi/);
  });
});
