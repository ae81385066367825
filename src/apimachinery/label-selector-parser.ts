// The label selector string syntax, lexed and parsed the way k8s.io/apimachinery/pkg/labels does it, so that the
// same inputs fail with the same messages.

import { fieldError, formatFieldError } from "./field-errors.ts";
import { newRequirement, type Operator, type Requirement, SelectorSyntaxError } from "./label-requirement.ts";
import { validateQualifiedName } from "./names.ts";

// ---- lexer -------------------------------------------------------------------------------------------------

type Token = "error" | "end" | ")" | "," | "!" | "==" | "=" | ">" | "identifier" | "in" | "<" | "!=" | "notin" | "(";

interface Scanned {
  token: Token;
  literal: string;
}

const keywords: Record<string, Token> = {
  ")": ")",
  ",": ",",
  "!": "!",
  "==": "==",
  "=": "=",
  ">": ">",
  in: "in",
  "<": "<",
  "!=": "!=",
  notin: "notin",
  "(": "(",
};

const isWhitespace = (ch: string) => ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
const isSpecial = (ch: string) => "=!(),><".includes(ch);

/** Splits the selector into tokens; a NUL character ends the input, as in upstream's byte lexer. */
function scan(text: string): Scanned[] {
  const items: Scanned[] = [];
  let pos = 0;
  const at = (i: number) => (i < text.length && text[i] !== "\0" ? text[i] : "");
  for (;;) {
    while (at(pos) && isWhitespace(at(pos))) pos++;
    const ch = at(pos);
    if (!ch) {
      items.push({ token: "end", literal: "" });
      return items;
    }
    if (isSpecial(ch)) {
      // Longest run of special characters that is still a known operator.
      let buffer = "";
      let last: Scanned | undefined;
      while (at(pos) && isSpecial(at(pos))) {
        buffer += at(pos);
        const token = Object.hasOwn(keywords, buffer) ? keywords[buffer] : undefined;
        if (token) last = { token, literal: buffer };
        else if (last) break;
        pos++;
      }
      items.push(last ?? { token: "error", literal: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let word = "";
    while (at(pos) && !isSpecial(at(pos)) && !isWhitespace(at(pos))) word += text[pos++];
    const keyword = word === "in" || word === "notin" ? keywords[word] : undefined;
    items.push({ token: keyword ?? "identifier", literal: word });
  }
}

// ---- parser ------------------------------------------------------------------------------------------------

/** A recursive-descent parser mirroring upstream's, so the same inputs fail with the same messages. */
class Parser {
  private readonly items: Scanned[];
  private position = 0;

  constructor(text: string) {
    this.items = scan(text);
  }

  /** In value context the keywords `in` and `notin` are plain identifiers (`x in (in)`). */
  private lookahead(values: boolean): Scanned {
    const item = this.items[this.position];
    return values && (item.token === "in" || item.token === "notin")
      ? { token: "identifier", literal: item.literal }
      : item;
  }

  private consume(values: boolean): Scanned {
    const item = this.lookahead(values);
    this.position++;
    return item;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const next = this.lookahead(true);
      if (next.token === "end") return requirements;
      if (next.token !== "identifier" && next.token !== "!") {
        throw new SelectorSyntaxError(`found '${next.literal}', expected: !, identifier, or 'end of string'`);
      }
      try {
        requirements.push(this.parseRequirement());
      } catch (error) {
        if (error instanceof SelectorSyntaxError) {
          throw new SelectorSyntaxError(`unable to parse requirement: ${error.message}`);
        }
        throw error;
      }
      const after = this.consume(true);
      if (after.token === "end") return requirements;
      if (after.token !== ",") {
        throw new SelectorSyntaxError(`found '${after.literal}', expected: ',' or 'end of string'`);
      }
      const following = this.lookahead(true);
      if (following.token !== "identifier" && following.token !== "!") {
        throw new SelectorSyntaxError(`found '${following.literal}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): Requirement {
    let operator: Operator | undefined;
    let item = this.consume(true);
    if (item.token === "!") {
      operator = "!";
      item = this.consume(true);
    }
    if (item.token !== "identifier") throw new SelectorSyntaxError(`found '${item.literal}', expected: identifier`);
    const key = item.literal;
    const keyProblems = validateQualifiedName(key);
    if (keyProblems.length > 0) {
      // Upstream validates the key against a nil field path here, hence "<nil>".
      throw new SelectorSyntaxError(formatFieldError(fieldError.invalid("<nil>", key, keyProblems.join("; "))));
    }
    const next = this.lookahead(true).token;
    if (operator === undefined && (next === "end" || next === ",")) operator = "exists";
    if (operator === "exists" || operator === "!") return newRequirement(key, operator, []);

    const op = this.parseOperator();
    const values = op === "in" || op === "notin" ? this.parseValues() : this.parseExactValue();
    // Upstream collects values in a sorted set before checking them, so error indexes follow sorted order.
    return newRequirement(key, op, [...new Set(values)].sort());
  }

  private parseOperator(): Operator {
    const { token, literal } = this.consume(false);
    switch (token) {
      case "in":
      case "notin":
      case "=":
      case "==":
      case "!=":
        return token;
      case ">":
        return "gt";
      case "<":
        return "lt";
      default:
        throw new SelectorSyntaxError(`found '${literal}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private parseValues(): string[] {
    const open = this.consume(true);
    if (open.token !== "(") throw new SelectorSyntaxError(`found '${open.literal}' expected: '('`);
    const first = this.lookahead(true);
    if (first.token === ")") {
      this.consume(true);
      return [""];
    }
    if (first.token !== "identifier" && first.token !== ",") {
      throw new SelectorSyntaxError(`found '${first.literal}', expected: ',', ')' or identifier`);
    }
    const values = this.parseIdentifiersList();
    if (this.consume(true).token !== ")") {
      throw new SelectorSyntaxError(`found '${first.literal}', expected: ')'`);
    }
    return values;
  }

  /** A possibly empty, comma separated list of possibly empty values: `(a,,b)` holds "a", "" and "b". */
  private parseIdentifiersList(): string[] {
    const values = new Set<string>();
    for (;;) {
      const item = this.consume(true);
      if (item.token === "identifier") {
        values.add(item.literal);
        const next = this.lookahead(true);
        if (next.token === ",") continue;
        if (next.token === ")") return [...values];
        throw new SelectorSyntaxError(`found '${next.literal}', expected: ',' or ')'`);
      }
      if (item.token === ",") {
        if (values.size === 0) values.add("");
        const next = this.lookahead(true).token;
        if (next === ")") {
          values.add("");
          return [...values];
        }
        if (next === ",") {
          this.consume(true);
          values.add("");
        }
        continue;
      }
      throw new SelectorSyntaxError(`found '${item.literal}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): string[] {
    const next = this.lookahead(true).token;
    if (next === "end" || next === ",") return [""];
    const item = this.consume(true);
    if (item.token === "identifier") return [item.literal];
    throw new SelectorSyntaxError(`found '${item.literal}', expected: identifier`);
  }
}

/** The requirements of a selector string; throws SelectorSyntaxError with upstream's message. */
export function parseRequirements(text: string): Requirement[] {
  return new Parser(text).parse();
}
