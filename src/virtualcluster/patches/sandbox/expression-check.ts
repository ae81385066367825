import { type Node, type Program, parse } from "acorn";

// Only a single ES expression is accepted (arrow functions inside are fine). The check uses a real parser so the
// rule is exact; the sandbox, not this check, is the security boundary.

export class ExpressionSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExpressionSyntaxError";
  }
}

/** Longest expression source accepted. */
export const MAX_EXPRESSION_LENGTH = 64 * 1024;
/** Deepest syntax tree accepted; keeps the engine's own parser far from its stack limit. */
export const MAX_EXPRESSION_DEPTH = 64;

const PARAMETERS = ["value", "valueExists", "context"];
const STRICT_PREFIX = '"use strict";\n';
const WRAP_BEFORE = `${STRICT_PREFIX}(${PARAMETERS.join(", ")}) => (\n`;
const WRAP_AFTER = "\n);\n";

const statementNames: Record<string, string> = {
  VariableDeclaration: "a variable declaration",
  FunctionDeclaration: "a function declaration",
  ClassDeclaration: "a class declaration",
  BlockStatement: "a block (wrap an object literal in parentheses)",
  IfStatement: "an if statement",
  ForStatement: "a for loop",
  ForInStatement: "a for-in loop",
  ForOfStatement: "a for-of loop",
  WhileStatement: "a while loop",
  DoWhileStatement: "a do-while loop",
  ReturnStatement: "a return statement",
  ThrowStatement: "a throw statement",
  TryStatement: "a try statement",
  SwitchStatement: "a switch statement",
  EmptyStatement: "an empty statement",
  LabeledStatement: "a labeled statement",
  DebuggerStatement: "a debugger statement",
  ImportDeclaration: "an import declaration",
  ExportNamedDeclaration: "an export declaration",
};

function parseStrict(text: string): Program {
  return parse(text, { ecmaVersion: "latest", sourceType: "script", strict: true, allowHashBang: false });
}

/** Re-states acorn's position relative to the user's text (the strict prefix adds one line). */
function syntaxMessage(error: unknown): string {
  const { message, loc } = error as { message: string; loc?: { line: number; column: number } };
  if (error instanceof RangeError || /stack space/.test(String(message))) return "the expression is nested too deeply";
  const text = String(message).replace(/ \(\d+:\d+\)$/, "");
  return loc ? `${text} (line ${loc.line - 1}, column ${loc.column + 1})` : text;
}

function children(node: Node): Node[] {
  const result: Node[] = [];
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item.type === "string") result.push(item);
    } else if (value && typeof value === "object" && typeof (value as Node).type === "string") {
      result.push(value as Node);
    }
  }
  return result;
}

/** Identifier children of a node that are property names, not variables. */
function propertyNames(node: Node): Set<Node> {
  const { computed, shorthand, property, key } = node as unknown as Record<string, Node & boolean>;
  if (node.type === "MemberExpression" && !computed) return new Set([property]);
  if ((node.type === "Property" || node.type === "MethodDefinition") && !computed && !shorthand) return new Set([key]);
  return new Set();
}

/**
 * How much of `context` an expression can reach (eval is unavailable, so the identifier is the only way in):
 * nothing; only `context.vcluster`; `context.vcluster` and `context.path`; or everything (any other use).
 */
export type ContextUse = "none" | "vcluster" | "light" | "full";

const USE_ORDER: ContextUse[] = ["none", "vcluster", "light", "full"];

/** The wider of two uses. */
export function widerUse(a: ContextUse, b: ContextUse): ContextUse {
  return USE_ORDER.indexOf(a) >= USE_ORDER.indexOf(b) ? a : b;
}

/** `context.vcluster` or `context.path` (needing neither the host nor the virtual object), or undefined. */
function lightContextAccess(node: Node): ContextUse | undefined {
  const { object, property, computed } = node as unknown as { object: Node; property: Node; computed: boolean };
  if (node.type !== "MemberExpression" || computed || object.type !== "Identifier") return undefined;
  if ((object as unknown as { name: string }).name !== "context") return undefined;
  const name = (property as unknown as { name: string }).name;
  return name === "vcluster" ? "vcluster" : name === "path" ? "light" : undefined;
}

/**
 * Rejects module loading and asynchronous code anywhere in the tree, and trees that nest too deeply. Returns how
 * the expression uses `context`.
 */
function checkTree(root: Node): ContextUse {
  let use: ContextUse = "none";
  const stack: [Node, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_EXPRESSION_DEPTH) {
      throw new ExpressionSyntaxError(`the expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep`);
    }
    const type = node.type;
    if (type === "ImportExpression")
      throw new ExpressionSyntaxError("import() is not allowed: modules cannot be loaded");
    if (type === "MetaProperty" && (node as unknown as { meta: { name: string } }).meta.name === "import") {
      throw new ExpressionSyntaxError("import.meta is not allowed");
    }
    if (type === "AwaitExpression" || (node as { async?: boolean }).async === true) {
      throw new ExpressionSyntaxError("async functions and await are not supported: expressions run synchronously");
    }
    const light = lightContextAccess(node);
    if (light) {
      use = widerUse(use, light);
      continue;
    }
    if (type === "Identifier" && (node as unknown as { name: string }).name === "context") use = "full";
    const names = propertyNames(node);
    for (const child of children(node)) {
      // A property name (`value.context`, `{ context: 1 }`) is not the variable; descend without counting it.
      if (names.has(child)) stack.push(...children(child).map((grandchild): [Node, number] => [grandchild, depth + 2]));
      else stack.push([child, depth + 1]);
    }
  }
  return use;
}

export interface CheckedExpression {
  /** The program the sandbox compiles: a strict arrow function `(value, valueExists, context) => (expression)`. */
  program: string;
  /** What the expression can read of `context`, so the host passes only that. */
  contextUse: ContextUse;
}

/** Checks that `source` is exactly one expression. Throws ExpressionSyntaxError. */
export function checkExpression(source: string): CheckedExpression {
  if (typeof source !== "string") throw new ExpressionSyntaxError("the expression must be a string");
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionSyntaxError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  let program: Program;
  try {
    program = parseStrict(STRICT_PREFIX + source);
  } catch (error) {
    const message = syntaxMessage(error);
    throw new ExpressionSyntaxError(message.startsWith("the expression") ? message : `syntax error: ${message}`);
  }
  const body = program.body.slice(1);
  if (body.length === 0) throw new ExpressionSyntaxError("the expression is empty");
  if (body.length > 1) {
    throw new ExpressionSyntaxError(`only a single expression is allowed, found ${body.length} statements`);
  }
  const [statement] = body;
  if (statement.type !== "ExpressionStatement") {
    const name = statementNames[statement.type] ?? `a ${statement.type}`;
    throw new ExpressionSyntaxError(`only a single expression is allowed, not ${name}`);
  }
  const contextUse = checkTree(statement.expression);
  const text = source.slice(
    statement.expression.start - STRICT_PREFIX.length,
    statement.expression.end - STRICT_PREFIX.length,
  );
  return { program: wrap(text), contextUse };
}

/** Wraps the expression and proves, by parsing the result, that the text cannot break out of its parentheses. */
function wrap(expression: string): string {
  const program = WRAP_BEFORE + expression + WRAP_AFTER;
  const parsed = parseStrict(program);
  const [, statement] = parsed.body;
  const arrow = statement?.type === "ExpressionStatement" ? statement.expression : undefined;
  const ok =
    parsed.body.length === 2 &&
    arrow?.type === "ArrowFunctionExpression" &&
    arrow.expression &&
    arrow.params.length === PARAMETERS.length &&
    arrow.params.every((param, index) => param.type === "Identifier" && param.name === PARAMETERS[index]) &&
    arrow.body.start === WRAP_BEFORE.length &&
    arrow.body.end === WRAP_BEFORE.length + expression.length;
  if (!ok) throw new ExpressionSyntaxError("the expression could not be wrapped safely");
  return program;
}
