// Value formats the platform config checks beyond its schema: addresses, HTTP headers, quantities, Prometheus
// durations and Go (RE2) regular expressions.

/** An absolute http(s) address. */
export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol, host } = new URL(text);
  return (protocol === "https:" || protocol === "http:") && host !== "";
}

/** Any absolute address with a scheme (chart repositories may be oci://). */
export function isAbsoluteUrl(text: string): boolean {
  return URL.canParse(text) && /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/** A host name or address, optionally with a port, and nothing else (no scheme, path or spaces). */
export function isHostWithoutScheme(text: string): boolean {
  return /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)(:\d{1,5})?$/.test(
    text,
  );
}

/** RFC 9110 field name (token). */
export function isHeaderName(text: string): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(text);
}

/** A field value Node will send: visible ASCII, spaces and tabs, obs-text; never CR, LF or NUL. */
export function isHeaderValue(text: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(text);
}

// "\d+\.?\d*" would split a run of digits every way between its two quantifiers: quadratic on a long one.
const QUANTITY = /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$/;

/** A Kubernetes resource quantity ("500m", "2", "4Gi", "1e3"); numbers from YAML count too. */
export function isQuantity(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  return typeof value === "string" && QUANTITY.test(value);
}

const QUANTITY_SUFFIX: Record<string, number> = {
  "": 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity ("500m" = 0.5, "1Gi" = 1073741824, "1e3" = 1000); undefined when it is not one. */
export function quantityValue(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string") return undefined;
  const match = QUANTITY.exec(value);
  if (!match) return undefined;
  const suffix = match[2] ?? "";
  if (/^[eE][+-]?\d/.test(suffix)) return Number(value);
  return Number(value.slice(0, value.length - suffix.length)) * QUANTITY_SUFFIX[suffix];
}

export function isNegativeQuantity(value: unknown): boolean {
  return typeof value === "number" ? value < 0 : typeof value === "string" && value.startsWith("-");
}

const PROMETHEUS_DURATION = /^((\d+)y)?((\d+)w)?((\d+)d)?((\d+)h)?((\d+)m)?((\d+)s)?((\d+)ms)?$/;

/** A positive Prometheus duration ("15d", "2w", "1y", "1h30m"): units in decreasing order, each at most once. */
export function isPrometheusDuration(text: string): boolean {
  const match = PROMETHEUS_DURATION.exec(text);
  if (!match || text === "") return false;
  return [2, 4, 6, 8, 10, 12, 14].some((group) => Number(match[group] ?? 0) > 0);
}

const PROMETHEUS_UNIT_SECONDS = [365 * 86_400, 7 * 86_400, 86_400, 3600, 60, 1, 0.001];

/** Seconds of a Prometheus duration; undefined when it is not one. */
export function prometheusDurationSeconds(text: string): number | undefined {
  if (!isPrometheusDuration(text)) return undefined;
  const match = PROMETHEUS_DURATION.exec(text) as RegExpExecArray;
  return PROMETHEUS_UNIT_SECONDS.reduce((total, unit, i) => total + Number(match[2 + 2 * i] ?? 0) * unit, 0);
}

/**
 * Checks a Go (RE2) regular expression by compiling it as JavaScript, after translating what the two spell
 * differently (leading flag groups like "(?i)", "(?P<name>"). Refuses what RE2 lacks: backreferences, lookaround.
 */
export function goRegexpProblem(pattern: string): string | undefined {
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences are not supported (RE2 syntax)";
  if (/\(\?<?[=!]/.test(pattern)) return "lookahead and lookbehind are not supported (RE2 syntax)";
  let body = pattern.replaceAll("(?P<", "(?<");
  let flags = "";
  const leading = /^\(\?([imsU]+)\)/.exec(body);
  if (leading) {
    if (leading[1].includes("U")) return 'the "U" flag is not supported here';
    flags = [...new Set(leading[1])].join("");
    body = body.slice(leading[0].length);
  }
  try {
    new RegExp(body, flags);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression: /, "");
  }
}

/** Compiles a Go-style pattern for use (the translation of goRegexpProblem). Call only on a checked pattern. */
export function compileGoRegexp(pattern: string): RegExp {
  let body = pattern.replaceAll("(?P<", "(?<");
  const leading = /^\(\?([ims]+)\)/.exec(body);
  const flags = leading ? [...new Set(leading[1])].join("") : "";
  if (leading) body = body.slice(leading[0].length);
  return new RegExp(body, flags);
}
