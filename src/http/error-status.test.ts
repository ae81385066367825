import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import { StorageError } from "../storage/types.ts";
import { toStatusError } from "./error-status.ts";

function fastifyError(code: string, statusCode: number): Error {
  return Object.assign(new Error(`fastify says ${code}`), { code, statusCode });
}

describe("toStatusError()", () => {
  it("toStatusError() passes StatusErrors through", () => {
    const error = errors.notFound({ group: "g", resource: "users" }, "x");
    assert.deepEqual(toStatusError(error), { error, internal: false });
  });

  it("toStatusError() maps fastify's body limit to the contract's 413", () => {
    const { error, internal } = toStatusError(fastifyError("FST_ERR_CTP_BODY_TOO_LARGE", 413));
    assert.equal(internal, false);
    assert.equal(error.code, 413);
    assert.equal(error.reason, "RequestEntityTooLarge");
    assert.equal(error.message, "Request entity too large: limit is 3145728");
  });

  it("toStatusError() maps fastify's client errors to 4xx Status, never 500", () => {
    assert.equal(
      toStatusError(fastifyError("FST_ERR_CTP_INVALID_MEDIA_TYPE", 415)).error.reason,
      "UnsupportedMediaType",
    );
    assert.equal(toStatusError(fastifyError("FST_ERR_BAD_URL", 400)).error.code, 400);
    assert.equal(toStatusError(fastifyError("FST_ERR_CTP_INVALID_CONTENT_LENGTH", 400)).error.code, 400);
    assert.equal(toStatusError(fastifyError("FST_SOMETHING_NEW", 404)).error.reason, "NotFound");
    assert.equal(toStatusError(fastifyError("FST_SOMETHING_NEW", 418)).error.code, 400);
  });

  it("toStatusError() answers a store out of space with 507 InsufficientStorage, without the file's path", () => {
    const { error, internal } = toStatusError(
      new StorageError("NoSpace", "storage /var/lib/vcp/platform.db is out of space"),
    );
    assert.equal(internal, false);
    assert.equal(error.code, 507);
    assert.equal(error.reason, "InsufficientStorage");
    assert.match(error.message, /out of disk space/);
    assert.doesNotMatch(error.message, /\/var\/lib/);
  });

  it("toStatusError() answers a store closed under the request (shutdown) with 503, not 500", () => {
    const { error, internal } = toStatusError(new StorageError("Closed", "storage is closed"));
    assert.equal(internal, false);
    assert.equal(error.code, 503);
    assert.equal(error.reason, "ServiceUnavailable");
    assert.equal(error.message, "the server is shutting down");
  });

  it("toStatusError() keeps other storage failures internal (500, logged)", () => {
    const { error, internal } = toStatusError(new StorageError("Corrupt", "storage /x/platform.db is corrupt"));
    assert.equal(internal, true);
    assert.equal(error.code, 500);
  });

  it("toStatusError() turns unknown exceptions into an InternalError that hides the message", () => {
    const { error, internal } = toStatusError(new TypeError("secret token abc is undefined"));
    assert.equal(internal, true);
    assert.equal(error.code, 500);
    assert.equal(error.reason, "InternalError");
    assert.doesNotMatch(error.message, /secret/);
    assert.equal(toStatusError("a string").internal, true);
    assert.equal(toStatusError(Object.assign(new Error("x"), { statusCode: 503 })).error.code, 500);
  });
});
