// One requirement of a label selector (upstream labels.Requirement): its checks, with upstream's messages, its
// compiled predicate and its canonical string form. Shared by the string parser and the metav1.LabelSelector form.

import { fieldError, formatFieldError } from "./field-errors.ts";
import { validateLabelValue, validateQualifiedName } from "./names.ts";

export type Operator = "in" | "notin" | "=" | "==" | "!=" | "exists" | "!" | "gt" | "lt";

export interface Requirement {
  key: string;
  operator: Operator;
  /** Sorted and unique, as upstream's sets.String. */
  values: string[];
}

/** Thrown inside the parser; carries upstream's error text. */
export class SelectorSyntaxError extends Error {}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(value, 10, 64): optional sign, decimal digits, within int64. */
function parseInt64(value: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const n = BigInt(value);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** Upstream NewRequirement's checks, rendered as its field errors (`key: ...`, `values[0][app]: ...`). */
function requirementErrors(key: string, operator: Operator, values: string[]): string[] {
  const messages: string[] = [];
  const keyProblems = validateQualifiedName(key);
  if (keyProblems.length > 0) messages.push(formatFieldError(fieldError.invalid("key", key, keyProblems.join("; "))));
  const invalidValues = (detail: string) =>
    messages.push(formatFieldError(fieldError.invalid("values", values, detail)));
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) invalidValues("for 'in', 'notin' operators, values set can't be empty");
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) invalidValues("exact-match compatibility requires one single value");
      break;
    case "exists":
    case "!":
      if (values.length !== 0) invalidValues("values set must be empty for exists and does not exist");
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) invalidValues("for 'Gt', 'Lt' operators, exactly one value is required");
      values.forEach((value, i) => {
        if (parseInt64(value) === undefined) {
          messages.push(
            formatFieldError(
              fieldError.invalid(`values[${i}]`, value, "for 'Gt', 'Lt' operators, the value must be an integer"),
            ),
          );
        }
      });
      break;
  }
  values.forEach((value, i) => {
    const msg = validateLabelValue(value).join("; ");
    if (msg) messages.push(formatFieldError(fieldError.invalid(`values[${i}][${key}]`, value, msg)));
  });
  return messages;
}

/** utilerrors.Aggregate: one message as is, several as `[a, b]` without duplicates. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`;
}

export function newRequirement(key: string, operator: Operator, values: string[]): Requirement {
  const problems = requirementErrors(key, operator, values);
  if (problems.length > 0) throw new SelectorSyntaxError(aggregate(problems));
  return { key, operator, values: [...new Set(values)].sort() };
}

/** Labels as a selector sees them: absent and `{}` alike. */
export type LabelsPredicate = (labels: Record<string, string> | undefined) => boolean;

/** The requirement as a predicate; its values and integer bound are read here once, not per object. */
export function compileRequirement(r: Requirement): LabelsPredicate {
  const key = r.key;
  switch (r.operator) {
    case "in":
    case "=":
    case "==": {
      if (r.values.length === 1) {
        const only = r.values[0];
        return (labels) => labels !== undefined && Object.hasOwn(labels, key) && labels[key] === only;
      }
      const values = new Set(r.values);
      return (labels) => labels !== undefined && Object.hasOwn(labels, key) && values.has(labels[key]);
    }
    case "notin":
    case "!=": {
      const values = new Set(r.values);
      return (labels) => labels === undefined || !Object.hasOwn(labels, key) || !values.has(labels[key]);
    }
    case "exists":
      return (labels) => labels !== undefined && Object.hasOwn(labels, key);
    case "!":
      return (labels) => labels === undefined || !Object.hasOwn(labels, key);
    case "gt":
    case "lt": {
      const bound = r.values.length === 1 ? parseInt64(r.values[0]) : undefined;
      if (bound === undefined) return () => false;
      const above = r.operator === "gt";
      return (labels) => {
        if (labels === undefined || !Object.hasOwn(labels, key)) return false;
        const actual = parseInt64(labels[key]);
        return actual !== undefined && (above ? actual > bound : actual < bound);
      };
    }
  }
}

const operatorText: Record<Operator, string> = {
  "=": "=",
  "==": "==",
  "!=": "!=",
  in: " in ",
  notin: " notin ",
  gt: ">",
  lt: "<",
  exists: "",
  "!": "",
};

export function requirementString(r: Requirement): string {
  if (r.operator === "!") return `!${r.key}`;
  if (r.operator === "exists") return r.key;
  const values = r.values.join(",");
  const shown = r.operator === "in" || r.operator === "notin" ? `(${values})` : values;
  return r.key + operatorText[r.operator] + shown;
}
