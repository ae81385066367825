// Label selectors: the string syntax of the labelSelector query parameter (k8s.io/apimachinery/pkg/labels) and the
// metav1.LabelSelector object form. Invalid selectors are 400 BadRequest with upstream's messages.

import { allOf } from "../utils/all-of.ts";
import { errors } from "./errors.ts";
import {
  compileRequirement,
  type LabelsPredicate,
  newRequirement,
  type Operator,
  type Requirement,
  requirementString,
  SelectorSyntaxError,
} from "./label-requirement.ts";
import { parseRequirements } from "./label-selector-parser.ts";

/** A parsed selector: `matches` is compiled once, at parse time. */
export interface LabelSelector {
  /** Sorted by key, as upstream. */
  readonly requirements: readonly Requirement[];
  readonly matches: LabelsPredicate;
  isEmpty(): boolean;
  toString(): string;
}

function selectorOf(requirements: Requirement[]): LabelSelector {
  // Sorted by key (stable), as upstream does for a deterministic string form.
  const sorted = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements: sorted,
    matches: allOf(sorted.map(compileRequirement)),
    isEmpty: () => sorted.length === 0,
    toString: () => sorted.map(requirementString).join(","),
  };
}

/** Parses `app=web,tier in (a,b),!legacy,replicas>2`; the empty string selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return selectorOf(parseRequirements(text));
  } catch (error) {
    if (error instanceof SelectorSyntaxError) throw errors.badRequest(error.message);
    throw error;
  }
}

interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const nothing: LabelSelector = { requirements: [], matches: () => false, isEmpty: () => false, toString: () => "" };

const expressionOperators: Record<string, Operator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
};

/**
 * metav1.LabelSelectorAsSelector: matchLabels are `key=value`, matchExpressions use In, NotIn, Exists and
 * DoesNotExist. An empty selector matches everything; a missing one (null) matches nothing.
 */
export function labelSelectorFromObject(selector: LabelSelectorObject): LabelSelector {
  if (selector === null || selector === undefined) return nothing;
  const requirements: Requirement[] = [];
  try {
    const matchLabels = selector.matchLabels ?? {};
    for (const key of Object.keys(matchLabels)) {
      requirements.push(newRequirement(key, "=", [String(matchLabels[key])]));
    }
    for (const expression of selector.matchExpressions ?? []) {
      const operator = Object.hasOwn(expressionOperators, expression?.operator)
        ? expressionOperators[expression.operator]
        : undefined;
      if (!operator) {
        throw new SelectorSyntaxError(`"${String(expression?.operator)}" is not a valid label selector operator`);
      }
      const values = Array.isArray(expression.values) ? expression.values.map(String) : [];
      requirements.push(newRequirement(String(expression.key), operator, values));
    }
  } catch (error) {
    if (error instanceof SelectorSyntaxError) throw errors.badRequest(error.message);
    throw error;
  }
  return selectorOf(requirements);
}
