import assert from "node:assert/strict";
import { test } from "node:test";
import { checkExpression, ExpressionSyntaxError, MAX_EXPRESSION_DEPTH } from "./expression-check.ts";

const rejects = (source: string, message: RegExp) =>
  assert.throws(
    () => checkExpression(source),
    (error: unknown) => {
      assert.ok(error instanceof ExpressionSyntaxError, String(error));
      assert.match(error.message, message);
      return true;
    },
  );

test("checkExpression() wraps one expression in a strict arrow function", () => {
  const { program, contextUse } = checkExpression("value ? value + '-x' : value");
  assert.equal(program, "\"use strict\";\n(value, valueExists, context) => (\nvalue ? value + '-x' : value\n);\n");
  assert.equal(contextUse, "none");
});

test("checkExpression() accepts arrow functions, ternaries, optional chaining and a trailing semicolon", () => {
  for (const source of [
    "value.map((x) => x * 2)",
    "value?.a ?? 'none'",
    "(() => { let x = 1; for (const y of [1, 2]) x += y; return x; })()",
    "({ a: 1 })",
    "value; // comment",
    "`${" + "value}-x`",
  ]) {
    checkExpression(source);
  }
});

test("checkExpression() notices how much of context is used", () => {
  assert.equal(checkExpression("context.vcluster.name + context.path").contextUse, "light");
  assert.equal(checkExpression("context.vcluster.name").contextUse, "vcluster");
  assert.equal(checkExpression("context.path").contextUse, "light");
  assert.equal(checkExpression("context.hostObject").contextUse, "full");
  assert.equal(checkExpression("context.path + context.virtualObject?.kind").contextUse, "full");
  assert.equal(checkExpression("context['vcluster']").contextUse, "full");
  assert.equal(checkExpression("JSON.stringify(context)").contextUse, "full");
  assert.equal(checkExpression("(({ context }) => context)({ context: 1 })").contextUse, "full");
  assert.equal(checkExpression("value.context").contextUse, "none");
  assert.equal(checkExpression("({ context: value })").contextUse, "none");
  assert.equal(checkExpression("value[context]").contextUse, "full");
});

test("checkExpression() rejects statements with a clear message", () => {
  rejects("let x = 1", /only a single expression is allowed, not a variable declaration/);
  rejects("if (value) value", /not an if statement/);
  rejects("{ a: 1 }", /not a block \(wrap an object literal in parentheses\)/);
  rejects("value; value", /found 2 statements/);
  rejects("function f() {}", /not a function declaration/);
  rejects("while (true) {}", /not a while loop/);
  rejects("", /the expression is empty/);
  rejects("   // only a comment", /the expression is empty/);
});

test("checkExpression() rejects return, throw, import and export statements as syntax errors or statements", () => {
  rejects("return value", /syntax error: 'return' outside of function/);
  rejects("throw value", /not a throw statement/);
  rejects("import x from 'fs'", /syntax error/);
  rejects("export default 1", /syntax error/);
});

test("checkExpression() rejects import(), import.meta, async functions and await", () => {
  rejects("import('fs')", /import\(\) is not allowed/);
  rejects("[1].map(() => import('fs'))", /import\(\) is not allowed/);
  rejects("(async () => 1)()", /async functions and await are not supported/);
  rejects("value.then(async function () {})", /async functions/);
});

test("checkExpression() reports syntax errors with line and column of the user's text", () => {
  rejects("value +", /^syntax error: Unexpected token \(line 1, column 8\)$/);
  rejects("value\n  .(", /syntax error: .*\(line 2, column 4\)/);
  rejects("with (value) x", /syntax error/); // strict mode, as in the sandbox
  rejects("010", /syntax error/);
});

test("checkExpression() rejects text that tries to close the wrapper", () => {
  rejects("value)); (globalThis", /syntax error/);
  rejects("value\n);\n(", /syntax error/);
  rejects("value /*", /syntax error/);
});

test("checkExpression() limits nesting and length", () => {
  rejects(`${"[".repeat(MAX_EXPRESSION_DEPTH + 5)}${"]".repeat(MAX_EXPRESSION_DEPTH + 5)}`, /nested more than/);
  rejects(`${"(".repeat(30000)}1${")".repeat(30000)}`, /nested/);
  rejects(`'${"x".repeat(70 * 1024)}'`, /longer than/);
});
