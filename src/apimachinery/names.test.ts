import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  generateName,
  validateAnnotations,
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabels,
  validateLabelValue,
  validateQualifiedName,
} from "./names.ts";

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe("validateDns1123Subdomain()", () => {
  for (const valid of ["a", "example.com", "a-b.c-d", "0", "a".repeat(253)]) {
    it(`validateDns1123Subdomain() accepts ${JSON.stringify(valid.slice(0, 20))}`, () => {
      assert.deepEqual(validateDns1123Subdomain(valid), []);
    });
  }
  for (const invalid of ["", "A", "-a", "a-", "a..b", "a_b", ".a", "a."]) {
    it(`validateDns1123Subdomain() rejects ${JSON.stringify(invalid)} with upstream's message`, () => {
      assert.deepEqual(validateDns1123Subdomain(invalid), [SUBDOMAIN_MESSAGE]);
    });
  }
  it("validateDns1123Subdomain() rejects more than 253 characters", () => {
    assert.deepEqual(validateDns1123Subdomain("a".repeat(254)), ["must be no more than 253 characters"]);
  });
});

describe("validateDns1123Label()", () => {
  it("validateDns1123Label() accepts a label", () => assert.deepEqual(validateDns1123Label("my-name-1"), []));
  it("validateDns1123Label() says a subdomain must not contain dots", () => {
    assert.deepEqual(validateDns1123Label("a.b"), ["must not contain dots"]);
  });
  it("validateDns1123Label() rejects uppercase with upstream's message", () => {
    assert.deepEqual(validateDns1123Label("Abc"), [LABEL_MESSAGE]);
  });
  it("validateDns1123Label() rejects more than 63 characters", () => {
    assert.deepEqual(validateDns1123Label("a".repeat(64)), ["must be no more than 63 characters"]);
  });
  it("validateDns1123Label() valid implies a valid subdomain", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9.-]{0,70}$/), (value) => {
        if (validateDns1123Label(value).length === 0) assert.deepEqual(validateDns1123Subdomain(value), []);
      }),
    );
  });
});

describe("validateQualifiedName()", () => {
  for (const valid of ["app", "App_1.x-y", "example.com/app", "a/B", "k8s.io/x"]) {
    it(`validateQualifiedName() accepts ${JSON.stringify(valid)}`, () =>
      assert.deepEqual(validateQualifiedName(valid), []));
  }
  it("validateQualifiedName() rejects an empty prefix", () => {
    assert.deepEqual(validateQualifiedName("/a"), ["prefix part must be non-empty"]);
  });
  it("validateQualifiedName() rejects an empty name with both messages, as upstream", () => {
    assert.deepEqual(validateQualifiedName(""), ["name part must be non-empty", NAME_PART_MESSAGE]);
  });
  it("validateQualifiedName() prefixes subdomain errors", () => {
    assert.deepEqual(validateQualifiedName("Bad/a"), [`prefix part ${SUBDOMAIN_MESSAGE}`]);
  });
  it("validateQualifiedName() rejects a name part over 63 characters", () => {
    assert.deepEqual(validateQualifiedName("a".repeat(64)), ["name part must be no more than 63 characters"]);
  });
  it("validateQualifiedName() rejects two slashes", () => {
    const [message] = validateQualifiedName("a/b/c");
    assert.match(message, /^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/'/);
  });
});

describe("validateLabelValue()", () => {
  it("validateLabelValue() accepts the empty string", () => assert.deepEqual(validateLabelValue(""), []));
  it("validateLabelValue() accepts MyValue, my_value, 12345", () => {
    for (const value of ["MyValue", "my_value", "12345"]) assert.deepEqual(validateLabelValue(value), []);
  });
  it("validateLabelValue() rejects a leading dash", () => {
    assert.match(validateLabelValue("-a")[0], /^a valid label must be an empty string or consist of/);
  });
  it("validateLabelValue() rejects 64 characters", () => {
    assert.deepEqual(validateLabelValue("a".repeat(64)), ["must be no more than 63 characters"]);
  });
});

describe("validateLabels()", () => {
  it("validateLabels() accepts valid labels and nothing", () => {
    assert.deepEqual(validateLabels({ app: "web", "example.com/tier": "" }, "metadata.labels"), []);
    assert.deepEqual(validateLabels(undefined, "metadata.labels"), []);
  });
  it("validateLabels() reports bad keys and values on the map's path, as upstream", () => {
    const errs = validateLabels({ "bad key": "ok", good: "bad value" }, "metadata.labels");
    assert.equal(errs.length, 2);
    assert.deepEqual(
      errs.map((e) => [e.type, e.field, e.badValue]),
      [
        ["FieldValueInvalid", "metadata.labels", "bad key"],
        ["FieldValueInvalid", "metadata.labels", "bad value"],
      ],
    );
  });
  it("validateLabels() rejects non-string values and non-maps", () => {
    assert.equal(validateLabels({ a: 1 }, "metadata.labels")[0].field, "metadata.labels[a]");
    assert.equal(validateLabels(["a"], "metadata.labels")[0].type, "FieldValueTypeInvalid");
  });
  it("validateLabels() treats __proto__ as an ordinary (invalid) key", () => {
    const labels = JSON.parse('{"__proto__": "x"}');
    assert.deepEqual(
      validateLabels(labels, "metadata.labels").map((e) => e.badValue),
      ["__proto__"],
    );
  });
});

describe("validateAnnotations()", () => {
  it("validateAnnotations() accepts uppercase keys (the check is case-insensitive)", () => {
    assert.deepEqual(validateAnnotations({ "Example.COM/Key": "v" }, "metadata.annotations"), []);
  });
  it("validateAnnotations() rejects a bad key", () => {
    const [error] = validateAnnotations({ "a b": "v" }, "metadata.annotations");
    assert.equal(error.type, "FieldValueInvalid");
    assert.equal(error.badValue, "a b");
  });
  it("validateAnnotations() limits the total size to 256 KiB", () => {
    assert.deepEqual(validateAnnotations({ a: "x".repeat(262143) }, "metadata.annotations"), []);
    assert.deepEqual(validateAnnotations({ a: "x".repeat(262144) }, "metadata.annotations"), [
      { type: "FieldValueTooLong", field: "metadata.annotations", detail: "must have at most 262144 bytes" },
    ]);
  });
  it("validateAnnotations() counts UTF-8 bytes", () => {
    assert.equal(validateAnnotations({ a: "é".repeat(131072) }, "metadata.annotations").length, 1);
  });
});

describe("generateName()", () => {
  it("generateName() appends five characters of the upstream alphabet", () => {
    assert.match(generateName("web-"), /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
  it("generateName() truncates the prefix to 58 characters", () => {
    const name = generateName("p".repeat(100));
    assert.equal(name.length, 63);
    assert.ok(name.startsWith("p".repeat(58)));
  });
  it("generateName() of a valid prefix is a valid name", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,70})$/), (prefix) => {
        assert.deepEqual(validateDns1123Subdomain(generateName(prefix)), []);
      }),
    );
  });
});
