// The Content-Security-Policy of the web console's pages, built from status.uiSettings on every page load:
//   externalURLs.block false (default): scripts and style sheets only from the platform and the configured
//     customJavaScript / customCss addresses; images and API calls (connect-src) from any https address.
//   externalURLs.block true: scripts, style sheets, images and calls only from the platform and externalURLs.allow,
//     the uiSettings addresses included ("the UI may only call the listed URLs").
// Entries that are not http(s) addresses (the anchor's predefined module names) add nothing: no module of ours
// calls out. Always: no plugins, no framing by other sites, forms and <base> to the platform only.

/** An http(s) address as a CSP source expression (origin + path; query dropped), or undefined when it is none. */
export function cspSource(value: unknown): string | undefined {
  if (typeof value !== "string" || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.username || url.password) return undefined;
  const source = `${url.origin}${url.pathname === "/" ? "" : url.pathname}`;
  // ";" and "," end a directive or a policy; whitespace ends a source.
  return /[;,\s'"]/.test(source) ? undefined : source;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

const sources = (values: unknown[]): string[] => [
  ...new Set(values.map(cspSource).filter((s): s is string => s !== undefined)),
];

export function consoleContentSecurityPolicy(ui: Record<string, unknown>): string {
  const external = (ui.externalURLs ?? {}) as { block?: unknown; allow?: unknown };
  let script: string[];
  let style: string[];
  let img: string[];
  let connect: string[];
  if (external.block === true) {
    const allowed = sources(strings(external.allow));
    script = allowed;
    style = allowed;
    img = allowed;
    connect = allowed;
  } else {
    script = sources(strings(ui.customJavaScript));
    style = sources(strings(ui.customCss));
    img = ["https:"];
    connect = ["https:"];
  }
  const directive = (name: string, extra: string[], base = ["'self'"]) => [name, ...base, ...extra].join(" ");
  return [
    directive("default-src", []),
    directive("script-src", script),
    directive("style-src", style),
    directive("img-src", img, ["'self'", "data:"]),
    directive("font-src", [], ["'self'", "data:"]),
    directive("connect-src", connect),
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
