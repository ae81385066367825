import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import {
  parseIncludeObject,
  parseListOptions,
  parsePatchOptions,
  parsePretty,
  parseWatchOptions,
  parseWriteOptions,
  type Query,
} from "./query-options.ts";

const isCode = (code: number, message?: string) => (e: unknown) =>
  isStatusError(e) && e.code === code && (message === undefined || e.message === message);

describe("parseListOptions()", () => {
  it("parseListOptions() reads kubectl's list parameters", () => {
    assert.deepEqual(
      parseListOptions(
        { labelSelector: "a=b", fieldSelector: "metadata.name=x", limit: "500", continue: "tok", resourceVersion: "0" },
        "ns",
      ),
      {
        namespace: "ns",
        labelSelector: "a=b",
        fieldSelector: "metadata.name=x",
        limit: 500,
        continue: "tok",
        resourceVersion: "0",
      },
    );
    assert.deepEqual(parseListOptions({ limit: "0" }, undefined), {});
    assert.deepEqual(parseListOptions({ resourceVersion: "12", resourceVersionMatch: "Exact" }, undefined), {
      resourceVersion: "12",
      resourceVersionMatch: "Exact",
    });
  });

  it("parseListOptions() answers 400 for unparsable limits", () => {
    for (const limit of ["-1", "abc", "1.5", "99999999999999999999"]) {
      assert.throws(() => parseListOptions({ limit }, undefined), isCode(400), limit);
    }
  });

  it("parseListOptions() rejects bad resourceVersionMatch as upstream's ListOptions validation does", () => {
    assert.throws(
      () => parseListOptions({ resourceVersion: "1", resourceVersionMatch: "Newest" }, undefined),
      isCode(
        422,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      ),
    );
    assert.throws(
      () => parseListOptions({ resourceVersionMatch: "Exact" }, undefined),
      isCode(
        422,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      ),
    );
    assert.throws(() => parseListOptions({ sendInitialEvents: "true" }, undefined), isCode(422));
  });

  it("parseListOptions() maps any query to options or a 400/422 Status", () => {
    const keys = fc.constantFrom(
      "limit",
      "continue",
      "resourceVersion",
      "resourceVersionMatch",
      "labelSelector",
      "sendInitialEvents",
      "x",
    );
    fc.assert(
      fc.property(fc.dictionary(keys, fc.oneof(fc.string(), fc.array(fc.string()))), (query) => {
        try {
          const options = parseListOptions(query as Query, undefined);
          if (options.limit !== undefined) assert.ok(Number.isSafeInteger(options.limit) && options.limit > 0);
        } catch (error) {
          assert.ok(isStatusError(error) && (error.code === 400 || error.code === 422), String(error));
        }
      }),
    );
  });
});

describe("parseWatchOptions()", () => {
  it("parseWatchOptions() reads kubectl wait's watch parameters", () => {
    assert.deepEqual(
      parseWatchOptions(
        {
          allowWatchBookmarks: "true",
          fieldSelector: "metadata.name=a",
          resourceVersion: "7",
          timeoutSeconds: "30",
          watch: "true",
        },
        undefined,
      ),
      { fieldSelector: "metadata.name=a", resourceVersion: "7", allowWatchBookmarks: true, timeoutSeconds: 30 },
    );
  });

  it("parseWatchOptions() accepts sendInitialEvents only with resourceVersionMatch=NotOlderThan", () => {
    assert.deepEqual(
      parseWatchOptions(
        { sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true" },
        "n",
      ),
      { namespace: "n", sendInitialEvents: true, resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: true },
    );
    assert.throws(() => parseWatchOptions({ sendInitialEvents: "true" }, undefined), isCode(422));
    assert.throws(() => parseWatchOptions({ resourceVersionMatch: "NotOlderThan" }, undefined), isCode(422));
    assert.throws(() => parseWatchOptions({ timeoutSeconds: "soon" }, undefined), isCode(400));
    assert.throws(() => parseWatchOptions({ allowWatchBookmarks: "maybe" }, undefined), isCode(400));
  });

  it("parseWatchOptions() narrows the legacy /watch/.../name form by field selector", () => {
    assert.equal(parseWatchOptions({ fieldSelector: "a=b" }, undefined, "x").fieldSelector, "a=b,metadata.name=x");
  });
});

describe("parseWriteOptions()", () => {
  it("parseWriteOptions() defaults fieldValidation to Warn and reads dryRun and fieldManager", () => {
    assert.deepEqual(parseWriteOptions({}, "CreateOptions"), { fieldValidation: "Warn" });
    assert.deepEqual(
      parseWriteOptions({ dryRun: "All", fieldManager: "kubectl-create", fieldValidation: "Strict" }, "CreateOptions"),
      {
        dryRun: true,
        fieldManager: "kubectl-create",
        fieldValidation: "Strict",
      },
    );
  });

  it("parseWriteOptions() rejects unknown dryRun, fieldValidation and long field managers", () => {
    assert.throws(
      () => parseWriteOptions({ dryRun: "Server" }, "CreateOptions"),
      isCode(
        422,
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Server"}: supported values: "All"',
      ),
    );
    assert.throws(() => parseWriteOptions({ fieldValidation: "Loose" }, "UpdateOptions"), isCode(422));
    assert.throws(
      () => parseWriteOptions({ fieldManager: "m".repeat(129) }, "UpdateOptions"),
      isCode(422, 'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'),
    );
    assert.deepEqual(parseWriteOptions({ fieldManager: "m".repeat(128) }, "UpdateOptions").fieldManager?.length, 128);
  });
});

describe("parsePatchOptions()", () => {
  it("parsePatchOptions() requires fieldManager for apply and allows force there", () => {
    assert.deepEqual(parsePatchOptions({ fieldManager: "kubectl", force: "true" }, "apply"), {
      fieldManager: "kubectl",
      fieldValidation: "Warn",
      force: true,
    });
    assert.throws(
      () => parsePatchOptions({}, "apply"),
      isCode(422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'),
    );
  });

  it("parsePatchOptions() forbids force for non-apply patches", () => {
    assert.throws(
      () => parsePatchOptions({ force: "false" }, "merge"),
      isCode(422, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'),
    );
  });
});

describe("parsePretty() and parseIncludeObject()", () => {
  it("parsePretty() reads true spellings and ignores garbage", () => {
    assert.equal(parsePretty({ pretty: "true" }), true);
    assert.equal(parsePretty({ pretty: "1" }), true);
    assert.equal(parsePretty({ pretty: "false" }), false);
    assert.equal(parsePretty({ pretty: "banana" }), false);
    assert.equal(parsePretty({}), false);
  });

  it("parseIncludeObject() defaults to Metadata and rejects unknown values", () => {
    assert.equal(parseIncludeObject({}), "Metadata");
    assert.equal(parseIncludeObject({ includeObject: "Object" }), "Object");
    assert.throws(() => parseIncludeObject({ includeObject: "All" }), isCode(400));
  });
});
