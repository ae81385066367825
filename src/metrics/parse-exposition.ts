// Prometheus's text exposition format (0.0.4) as it comes from outside the platform (a connected cluster's
// federation answer): one pass over the characters, no regular expression, bounded in characters, in samples and in
// labels per sample. Anything the format does not allow is an ExpositionError for the whole text, naming the line
// and what was expected, never the text itself. What it accepts:
//   - blank lines; `# HELP <name> <docstring>` (escapes \\ and \n), `# TYPE <name> <type>` (one per name), other
//     `#` comments;
//   - samples `<name>[{<label>="<value>",...[,]}] <value>[ <timestamp>]`, spaces or tabs between the parts; label
//     values with the escapes \\, \" and \n; each label name once per sample; a value a decimal float, NaN, Inf,
//     +Inf or -Inf (what Prometheus writes); a timestamp an integer of at most 18 digits (milliseconds).

export interface ExpositionSample {
  name: string;
  /** Label names and their values (unescaped), in the order written. */
  labels: [string, string][];
  /** The value as written. */
  value: string;
  /** The timestamp (milliseconds) as written, if any. */
  timestamp?: string;
}

export interface ExpositionLimits {
  /** Characters of the whole text. */
  maxChars: number;
  /** Sample lines. */
  maxSamples: number;
  /** Labels of one sample. */
  maxLabels: number;
}

/** The text is not exposition text, or is past a limit; the message names a line, never the text's content. */
export class ExpositionError extends Error {}

const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const MAX_TIMESTAMP_DIGITS = 18;

const isBlank = (c: string) => c === " " || c === "\t";
const isDigit = (c: string) => c >= "0" && c <= "9";
const isLetter = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
const isNameStart = (c: string, metric: boolean) => isLetter(c) || (metric && c === ":");
const isNamePart = (c: string, metric: boolean) => isNameStart(c, metric) || isDigit(c);

/** The index after the digits of `token` from `i`. */
function digitsFrom(token: string, i: number): number {
  let at = i;
  while (at < token.length && isDigit(token[at])) at++;
  return at;
}

/** Whether `token` is a float as Prometheus writes one: decimal (with exponent), NaN or [+-]Inf. */
function isFloat(token: string): boolean {
  const unsigned = token[0] === "+" || token[0] === "-" ? token.slice(1) : token;
  if (unsigned === "Inf" || token === "NaN") return true;
  const whole = digitsFrom(unsigned, 0);
  let i = whole;
  let fraction = 0;
  if (unsigned[i] === ".") {
    i = digitsFrom(unsigned, i + 1);
    fraction = i - whole - 1;
  }
  if (whole + fraction === 0) return false;
  if (unsigned[i] === "e" || unsigned[i] === "E") {
    const sign = unsigned[i + 1] === "+" || unsigned[i + 1] === "-" ? 1 : 0;
    const end = digitsFrom(unsigned, i + 1 + sign);
    if (end === i + 1 + sign) return false;
    i = end;
  }
  return i === unsigned.length;
}

function isTimestamp(token: string): boolean {
  const digits = token[0] === "-" ? token.slice(1) : token;
  if (digits.length === 0 || digits.length > MAX_TIMESTAMP_DIGITS) return false;
  for (const c of digits) if (!isDigit(c)) return false;
  return true;
}

/** Reads `text` whole; throws ExpositionError when any of it is not exposition text or a limit is passed. */
export function parseExposition(text: string, limits: ExpositionLimits): ExpositionSample[] {
  if (text.length > limits.maxChars) throw new ExpositionError(`more than ${limits.maxChars} characters`);
  if (!text.isWellFormed()) throw new ExpositionError("not well-formed Unicode");
  return new Reader(text, limits).read();
}

class Reader {
  readonly #text: string;
  readonly #limits: ExpositionLimits;
  readonly #samples: ExpositionSample[] = [];
  readonly #typed = new Set<string>();
  #at = 0;
  #line = 1;

  constructor(text: string, limits: ExpositionLimits) {
    this.#text = text;
    this.#limits = limits;
  }

  read(): ExpositionSample[] {
    while (this.#at < this.#text.length) {
      this.#blanks();
      const c = this.#peek();
      if (c === "#") this.#comment();
      else if (c !== "\n" && c !== "") this.#sample();
      this.#endOfLine();
    }
    return this.#samples;
  }

  #fail(what: string): never {
    throw new ExpositionError(`line ${this.#line}: ${what}`);
  }

  #peek(): string {
    return this.#text[this.#at] ?? "";
  }

  #blanks(): number {
    const start = this.#at;
    while (isBlank(this.#peek())) this.#at++;
    return this.#at - start;
  }

  #endOfLine(): void {
    this.#blanks();
    const c = this.#peek();
    if (c === "") return;
    if (c !== "\n") this.#fail("expected the end of the line");
    this.#at++;
    this.#line++;
  }

  #name(metric: boolean): string {
    const start = this.#at;
    if (!isNameStart(this.#peek(), metric)) this.#fail(metric ? "expected a metric name" : "expected a label name");
    while (isNamePart(this.#peek(), metric)) this.#at++;
    return this.#text.slice(start, this.#at);
  }

  /** Up to a blank or the end of the line. */
  #token(): string {
    const start = this.#at;
    for (let c = this.#peek(); c !== "" && c !== "\n" && !isBlank(c); c = this.#peek()) this.#at++;
    return this.#text.slice(start, this.#at);
  }

  /** The rest of a comment; a HELP line's escapes (\\ and \n) checked. */
  #restOfLine(help: boolean): void {
    for (let c = this.#peek(); c !== "" && c !== "\n"; c = this.#peek()) {
      this.#at++;
      if (c !== "\\" || !help) continue;
      const escaped = this.#peek();
      if (escaped !== "\\" && escaped !== "n") this.#fail("an escape other than \\\\ or \\n in a HELP line");
      this.#at++;
    }
  }

  #comment(): void {
    this.#at++; // "#"
    const keyword = this.#blanks() > 0 ? this.#token() : "";
    if ((keyword !== "HELP" && keyword !== "TYPE") || this.#blanks() === 0) {
      this.#restOfLine(false);
      return;
    }
    const name = this.#name(true);
    if (keyword === "HELP") {
      const c = this.#peek();
      if (c !== "" && c !== "\n" && !isBlank(c)) this.#fail("expected a blank after the metric name");
      this.#restOfLine(true);
      return;
    }
    if (this.#blanks() === 0) this.#fail("expected a blank after the metric name");
    if (!TYPES.has(this.#token())) this.#fail("expected counter, gauge, histogram, summary or untyped");
    if (this.#typed.has(name)) this.#fail("a second TYPE line for one metric name");
    this.#typed.add(name);
  }

  #sample(): void {
    if (this.#samples.length >= this.#limits.maxSamples) this.#fail(`more than ${this.#limits.maxSamples} samples`);
    const name = this.#name(true);
    this.#blanks();
    const labels = this.#peek() === "{" ? this.#labels() : [];
    this.#blanks();
    const value = this.#token();
    if (!isFloat(value)) this.#fail("expected a sample value");
    const sample: ExpositionSample = { name, labels, value };
    if (this.#blanks() > 0 && this.#peek() !== "\n" && this.#peek() !== "") {
      const timestamp = this.#token();
      if (!isTimestamp(timestamp)) this.#fail("expected a timestamp");
      sample.timestamp = timestamp;
    }
    this.#samples.push(sample);
  }

  #labels(): [string, string][] {
    this.#at++; // "{"
    const labels: [string, string][] = [];
    for (;;) {
      this.#blanks();
      if (this.#peek() === "}") break;
      if (labels.length >= this.#limits.maxLabels) this.#fail(`more than ${this.#limits.maxLabels} labels`);
      const name = this.#name(false);
      if (labels.some(([seen]) => seen === name)) this.#fail("a label name twice in one sample");
      this.#blanks();
      if (this.#peek() !== "=") this.#fail("expected = after a label name");
      this.#at++;
      this.#blanks();
      labels.push([name, this.#quoted()]);
      this.#blanks();
      if (this.#peek() === ",") this.#at++;
      else if (this.#peek() !== "}") this.#fail("expected , or } after a label value");
    }
    this.#at++; // "}"
    return labels;
  }

  #quoted(): string {
    if (this.#peek() !== '"') this.#fail("expected a quoted label value");
    this.#at++;
    let value = "";
    let start = this.#at;
    for (;;) {
      const c = this.#peek();
      if (c === "" || c === "\n") this.#fail("a label value without its closing quote");
      if (c === '"') break;
      if (c !== "\\") {
        this.#at++;
        continue;
      }
      value += this.#text.slice(start, this.#at);
      const escaped = this.#text[this.#at + 1];
      if (escaped === "\\" || escaped === '"') value += escaped;
      else if (escaped === "n") value += "\n";
      else this.#fail('an escape other than \\\\, \\" or \\n in a label value');
      this.#at += 2;
      start = this.#at;
    }
    value += this.#text.slice(start, this.#at);
    this.#at++; // the closing quote
    return value;
  }
}
