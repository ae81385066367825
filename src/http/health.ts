// /healthz, /livez and /readyz in apiserver's text format: `ok`, or with ?verbose one `[+]<check> ok` line per
// check and a summary; any failing check answers 500 and lists `[-]<check> failed: reason withheld`.
// A check may pass with a warning (it returns the text): the answer stays 200, and the warning goes into the
// verbose line and a `Warning` header (kubectl prints those), for conditions to act on before anything fails.

/** Throws (or rejects) to fail; returns (or resolves to) a string to pass with that warning; anything else passes. */
export type HealthCheck = () => unknown;

export interface HealthResult {
  code: number;
  body: string;
  /** Warnings of passing checks (absent when none). */
  warnings?: string[];
}

export interface HealthRequest {
  /** "healthz", "livez" or "readyz". */
  endpoint: string;
  /** A single check's name (/readyz/<check>), or "". */
  check: string;
  verbose: boolean;
  exclude: readonly string[];
}

interface Outcome {
  ok: boolean;
  warning?: string;
}

async function run(check: HealthCheck): Promise<Outcome> {
  try {
    const warning = await check();
    return typeof warning === "string" && warning ? { ok: true, warning } : { ok: true };
  } catch {
    return { ok: false };
  }
}

function withWarnings(result: HealthResult, outcomes: Outcome[]): HealthResult {
  const warnings = outcomes.flatMap((outcome) => (outcome.warning ? [outcome.warning] : []));
  return warnings.length > 0 ? { ...result, warnings } : result;
}

/** Runs the named checks (in their insertion order) and renders the answer. */
export async function runHealthChecks(
  checks: ReadonlyMap<string, HealthCheck>,
  request: HealthRequest,
): Promise<HealthResult> {
  if (request.check) {
    const check = checks.get(request.check);
    if (!check) return { code: 404, body: "404 page not found\n" };
    const outcome = await run(check);
    return outcome.ok
      ? withWarnings({ code: 200, body: "ok" }, [outcome])
      : { code: 500, body: "internal server error: reason withheld\n" };
  }
  const names = [...checks.keys()];
  const results = await Promise.all(
    names.map((name) =>
      request.exclude.includes(name) ? Promise.resolve<Outcome>({ ok: true }) : run(checks.get(name)!),
    ),
  );
  const failed = results.some((result) => !result.ok);
  if (!failed && !request.verbose) return withWarnings({ code: 200, body: "ok" }, results);
  const lines = names.map((name, i) => {
    if (request.exclude.includes(name)) return `[+]${name} excluded: ok`;
    const { ok, warning } = results[i];
    if (!ok) return `[-]${name} failed: reason withheld`;
    return warning ? `[+]${name} ok (warning: ${warning})` : `[+]${name} ok`;
  });
  lines.push(`${request.endpoint} check ${failed ? "failed" : "passed"}`);
  return withWarnings({ code: failed ? 500 : 200, body: `${lines.join("\n")}\n` }, results);
}
