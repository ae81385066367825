import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import { hasBody } from "./request-body.ts";

const status = (fn: () => unknown): number | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return isStatusError(error) ? error.code : -1;
  }
};

describe("hasBody()", () => {
  it("hasBody() reads no body of GET, HEAD, TRACE or unknown methods, whatever their headers say", () => {
    for (const method of ["GET", "HEAD", "TRACE", "PROPFIND"]) {
      assert.equal(hasBody(method, { "content-type": "application/json", "content-length": "2" }), false, method);
      assert.equal(hasBody(method, { "content-type": "not a media type" }), false, method);
    }
  });

  it("hasBody() without a Content-Type reads only a length other than 0 or a chunked body", () => {
    assert.equal(hasBody("POST", {}), false);
    assert.equal(hasBody("POST", { "content-length": "0" }), false);
    assert.equal(hasBody("DELETE", { "content-length": "2" }), true);
    assert.equal(hasBody("PUT", { "transfer-encoding": "chunked" }), true);
    assert.equal(
      status(() => hasBody("QUERY", {})),
      400,
    );
  });

  it("hasBody() reads a body with a media type, parameters unchecked, and answers 415 to anything else", () => {
    for (const type of [
      "application/json",
      "Application/JSON",
      " application/json ",
      "application/json; charset=utf-8",
      'application/json; charset="utf-8"',
      "application/json;;x",
      "application/vnd.kubernetes.protobuf",
      "*/*",
    ]) {
      assert.equal(hasBody("POST", { "content-type": type, "content-length": "2" }), true, type);
    }
    for (const type of ["", "json", "application/json/x", "application /json", "application/ json", "a/b c"]) {
      assert.equal(
        status(() => hasBody("POST", { "content-type": type })),
        415,
        JSON.stringify(type),
      );
    }
    // Even with no body to follow: the media type is checked first, as before.
    assert.equal(
      status(() => hasBody("PATCH", { "content-type": "nope", "content-length": "0" })),
      415,
    );
  });
});
