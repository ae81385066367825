// /healthz, /livez and /readyz in apiserver's text format: `ok`, or with ?verbose one `[+]<check> ok` line per
// check and a summary; any failing check answers 500 and lists `[-]<check> failed: reason withheld`.

export type HealthCheck = () => Promise<void> | void;

export interface HealthResult {
  code: number;
  body: string;
}

export interface HealthRequest {
  /** "healthz", "livez" or "readyz". */
  endpoint: string;
  /** A single check's name (/readyz/<check>), or "". */
  check: string;
  verbose: boolean;
  exclude: readonly string[];
}

async function passes(check: HealthCheck): Promise<boolean> {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}

/** Runs the named checks (in their insertion order) and renders the answer. */
export async function runHealthChecks(
  checks: ReadonlyMap<string, HealthCheck>,
  request: HealthRequest,
): Promise<HealthResult> {
  if (request.check) {
    const check = checks.get(request.check);
    if (!check) return { code: 404, body: "404 page not found\n" };
    return (await passes(check))
      ? { code: 200, body: "ok" }
      : { code: 500, body: "internal server error: reason withheld\n" };
  }
  const names = [...checks.keys()];
  const results = await Promise.all(
    names.map((name) => (request.exclude.includes(name) ? Promise.resolve(true) : passes(checks.get(name)!))),
  );
  const failed = results.includes(false);
  if (!failed && !request.verbose) return { code: 200, body: "ok" };
  const lines = names.map((name, i) => {
    if (request.exclude.includes(name)) return `[+]${name} excluded: ok`;
    return results[i] ? `[+]${name} ok` : `[-]${name} failed: reason withheld`;
  });
  lines.push(`${request.endpoint} check ${failed ? "failed" : "passed"}`);
  return { code: failed ? 500 : 200, body: `${lines.join("\n")}\n` };
}
