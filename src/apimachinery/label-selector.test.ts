import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "./errors.ts";
import { labelSelectorFromObject, parseLabelSelector } from "./label-selector.ts";

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(isStatusError(error), `expected a StatusError, got ${error}`);
    assert.equal(error.code, 400);
    assert.equal(error.reason, "BadRequest");
    return error.message;
  }
  assert.fail("expected a 400 BadRequest");
}

describe("parseLabelSelector()", () => {
  const matching: [string, Record<string, string>, boolean][] = [
    ["app=web", { app: "web" }, true],
    ["app=web", { app: "db" }, false],
    ["app=web", {}, false],
    ["app==web", { app: "web" }, true],
    ["app!=web", { app: "db" }, true],
    ["app!=web", {}, true],
    ["app!=web", { app: "web" }, false],
    ["tier in (a,b)", { tier: "b" }, true],
    ["tier in (a,b)", { tier: "c" }, false],
    ["tier in (a,b)", {}, false],
    ["tier notin (a,b)", { tier: "c" }, true],
    ["tier notin (a,b)", {}, true],
    ["tier notin (a,b)", { tier: "a" }, false],
    ["app", { app: "" }, true],
    ["app", {}, false],
    ["!app", {}, true],
    ["!app", { app: "x" }, false],
    ["replicas>2", { replicas: "3" }, true],
    ["replicas>2", { replicas: "2" }, false],
    ["replicas>2", { replicas: "x" }, false],
    ["replicas>2", {}, false],
    ["replicas<2", { replicas: "-5" }, true],
    ["replicas<2", { replicas: "10" }, false],
    ["app=web,tier in (a),!legacy", { app: "web", tier: "a" }, true],
    ["app=web,tier in (a),!legacy", { app: "web", tier: "a", legacy: "1" }, false],
    ["example.com/owner=alice", { "example.com/owner": "alice" }, true],
    ["app=", { app: "" }, true],
    ["app in (in)", { app: "in" }, true],
  ];
  for (const [selector, labels, expected] of matching) {
    it(`parseLabelSelector() ${JSON.stringify(selector)} ${expected ? "matches" : "does not match"} ${JSON.stringify(labels)}`, () => {
      assert.equal(parseLabelSelector(selector).matches(labels), expected);
    });
  }

  it("parseLabelSelector() tolerates whitespace around every token", () => {
    const selector = parseLabelSelector("  app =  web ,\ttier  in ( a , b ) ,\n! legacy , n > 1 ");
    assert.equal(selector.toString(), "app=web,!legacy,n>1,tier in (a,b)");
    assert.equal(selector.matches({ app: "web", tier: "b", n: "2" }), true);
  });

  it("parseLabelSelector() of the empty string selects everything", () => {
    const selector = parseLabelSelector("");
    assert.equal(selector.isEmpty(), true);
    assert.equal(selector.matches(undefined), true);
    assert.equal(selector.matches({ a: "b" }), true);
    assert.equal(selector.toString(), "");
  });

  it("parseLabelSelector() treats undefined labels as no labels", () => {
    assert.equal(parseLabelSelector("app").matches(undefined), false);
    assert.equal(parseLabelSelector("!app").matches(undefined), true);
  });

  it("parseLabelSelector() renders a sorted, canonical string like upstream", () => {
    assert.equal(parseLabelSelector("x in (foo,,baz),y,z notin ()").toString(), "x in (,baz,foo),y,z notin ()");
    assert.equal(parseLabelSelector("b==1,a!=2,c<3").toString(), "a!=2,b==1,c<3");
  });

  it("parseLabelSelector() does not see inherited properties as labels", () => {
    assert.equal(parseLabelSelector("constructor").matches({}), false);
    assert.equal(parseLabelSelector("!toString").matches({}), true);
    assert.match(
      badRequest(() => parseLabelSelector("__proto__=x")),
      /Invalid value: "__proto__"/,
    );
  });

  it("parseLabelSelector() compares Gt and Lt as 64-bit integers", () => {
    assert.equal(parseLabelSelector("n>9007199254740992").matches({ n: "9007199254740993" }), true);
    assert.equal(parseLabelSelector("n<5").matches({ n: "99999999999999999999" }), false, "out of int64 range");
  });

  const failures: [string, string][] = [
    ["a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ["a=b c", "found 'c', expected: ',' or 'end of string'"],
    ["a,", "found '', expected: identifier after ','"],
    ["a,,b", "found ',', expected: identifier after ','"],
    [",a", "found ',', expected: !, identifier, or 'end of string'"],
    ["a in b", "unable to parse requirement: found 'b' expected: '('"],
    ["a in (b", "unable to parse requirement: found '', expected: ',' or ')'"],
    ["a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ["!a=b", "found '=', expected: ',' or 'end of string'"],
    ["!=a", "found '!=', expected: !, identifier, or 'end of string'"],
    ["!!a", "unable to parse requirement: found '!', expected: identifier"],
    [
      "a>x",
      "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
    ],
    [
      "a%=b",
      "unable to parse requirement: <nil>: Invalid value: \"a%\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ],
    [
      "a=b%",
      "unable to parse requirement: values[0][a]: Invalid value: \"b%\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ],
  ];
  for (const [selector, message] of failures) {
    it(`parseLabelSelector() rejects ${JSON.stringify(selector)} with upstream's message`, () => {
      assert.equal(
        badRequest(() => parseLabelSelector(selector)),
        message,
      );
    });
  }

  it("parseLabelSelector() rejects a trailing comma", () => {
    assert.match(
      badRequest(() => parseLabelSelector("app=web,")),
      /expected: identifier after ','/,
    );
  });

  it("parseLabelSelector() rejects a key longer than 63 characters", () => {
    assert.match(
      badRequest(() => parseLabelSelector(`${"a".repeat(64)}=b`)),
      /name part must be no more than 63 characters/,
    );
  });

  it("parseLabelSelector() round-trips its own string form with the same meaning", () => {
    const key = fc.constantFrom("a", "b", "example.com/c");
    const value = fc.constantFrom("", "x", "y", "1", "20", "-3");
    const requirement = fc.oneof(
      fc.tuple(key, fc.constantFrom("=", "==", "!="), value).map(([k, op, v]) => `${k}${op}${v}`),
      fc
        .tuple(key, fc.constantFrom("in", "notin"), fc.array(value, { minLength: 1, maxLength: 3 }))
        .map(([k, op, vs]) => `${k} ${op} (${vs.join(",")})`),
      fc.tuple(key, fc.constantFrom(">", "<"), fc.constantFrom("0", "5", "30")).map(([k, op, v]) => `${k}${op}${v}`),
      key,
      key.map((k) => `!${k}`),
    );
    const labels = fc.dictionary(fc.constantFrom("a", "b", "example.com/c"), fc.constantFrom("", "x", "y", "1", "20"));
    fc.assert(
      fc.property(fc.array(requirement, { maxLength: 4 }), labels, (requirements, set) => {
        let selector: ReturnType<typeof parseLabelSelector>;
        try {
          selector = parseLabelSelector(requirements.join(","));
        } catch (error) {
          // Only value rules can fail here ("-3" is not a label value).
          assert.ok(isStatusError(error) && error.code === 400);
          return;
        }
        const again = parseLabelSelector(selector.toString());
        assert.equal(again.toString(), selector.toString());
        assert.equal(again.matches(set), selector.matches(set));
      }),
    );
  });

  it("parseLabelSelector() throws nothing but 400 StatusErrors on arbitrary input", () => {
    const alphabet = fc.constantFrom(
      "a",
      "b",
      "=",
      "!",
      "(",
      ")",
      ",",
      " ",
      "<",
      ">",
      "in",
      "notin",
      "/",
      ".",
      "-",
      "1",
      "\0",
    );
    const text = fc.oneof(
      fc.string(),
      fc.array(alphabet, { maxLength: 20 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(text, (input) => {
        try {
          parseLabelSelector(input).matches({ a: "1", b: "" });
        } catch (error) {
          assert.ok(isStatusError(error), String(error));
          assert.equal(error.code, 400);
        }
      }),
    );
  });
});

describe("labelSelectorFromObject()", () => {
  it("labelSelectorFromObject() ANDs matchLabels and matchExpressions", () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: "web" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["a", "b"] },
        { key: "env", operator: "NotIn", values: ["prod"] },
        { key: "owner", operator: "Exists" },
        { key: "legacy", operator: "DoesNotExist" },
      ],
    });
    assert.equal(selector.matches({ app: "web", tier: "a", owner: "x" }), true);
    assert.equal(selector.matches({ app: "web", tier: "a", owner: "x", env: "prod" }), false);
    assert.equal(selector.matches({ app: "web", tier: "a" }), false);
    assert.equal(selector.matches({ app: "web", tier: "a", owner: "x", legacy: "" }), false);
    assert.equal(selector.toString(), "app=web,env notin (prod),!legacy,owner,tier in (a,b)");
  });

  it("labelSelectorFromObject() of an empty selector matches everything", () => {
    const selector = labelSelectorFromObject({});
    assert.equal(selector.isEmpty(), true);
    assert.equal(selector.matches({ any: "thing" }), true);
  });

  it("labelSelectorFromObject() of a null selector matches nothing, as upstream", () => {
    const selector = labelSelectorFromObject(null as unknown as Parameters<typeof labelSelectorFromObject>[0]);
    assert.equal(selector.isEmpty(), false);
    assert.equal(selector.matches({}), false);
  });

  it("labelSelectorFromObject() rejects an unknown operator", () => {
    assert.equal(
      badRequest(() => labelSelectorFromObject({ matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] })),
      '"Gt" is not a valid label selector operator',
    );
  });

  it("labelSelectorFromObject() rejects In without values", () => {
    assert.equal(
      badRequest(() => labelSelectorFromObject({ matchExpressions: [{ key: "a", operator: "In", values: [] }] })),
      "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
    );
  });

  it("labelSelectorFromObject() rejects Exists with values", () => {
    assert.match(
      badRequest(() =>
        labelSelectorFromObject({ matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] }),
      ),
      /values set must be empty for exists and does not exist/,
    );
  });

  it("labelSelectorFromObject() rejects an invalid matchLabels key", () => {
    assert.match(
      badRequest(() => labelSelectorFromObject({ matchLabels: { "bad key": "x" } })),
      /^key: Invalid value: "bad key": name part must consist/,
    );
  });
});
