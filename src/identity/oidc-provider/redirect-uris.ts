// Which redirect URIs a client of the platform's OpenID provider may use (Config status.oidc.clients):
//   - a registered URI, compared as a string (OAuth 2.0 Security BCP: exact matching);
//   - with oidc.wildcardRedirect, a registered URI holding "*": in the host a "*" stands for letters, digits and
//     "-" (never a dot, so "*.example.com" is one level of subdomain), in the path and query for anything up to
//     the next "?" or "#"; it is compared with the parts of the parsed URI, so no parser trick changes the host;
//   - a public client (no secret) with no registered URI may use any http loopback address (RFC 8252 section 7.3),
//     and a loopback URI it registered with any port.
// A URI with a fragment, user information or a scheme other than http(s) is never allowed for web redirects, nor
// one holding whitespace, a control character or a backslash, which parsers drop or turn into "/" (what is checked
// must be what the browser reads).

export interface RedirectRules {
  registered: readonly string[];
  wildcard: boolean;
  publicClient: boolean;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const HOST_WILDCARD = "[A-Za-z0-9-]+";
const PATH_WILDCARD = "[^?#]*";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

function compile(pattern: string, wildcard: string): RegExp {
  return new RegExp(`^${pattern.split("*").map(escapeRegExp).join(wildcard)}$`);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const UNPARSED = /[\s\\\u0000-\u001f\u007f]/;

function parse(uri: string): URL | undefined {
  if (UNPARSED.test(uri)) return undefined;
  const url = URL.parse(uri);
  if (!url || url.hash || uri.includes("#") || url.username || url.password) return undefined;
  return url;
}

/** Whether `pattern` (a registered URI with "*") allows `candidate`. */
export function wildcardMatches(pattern: string, candidate: string): boolean {
  const template = parse(pattern);
  const url = parse(candidate);
  if (!template || !url || template.protocol !== url.protocol || template.port !== url.port) return false;
  // Labels of a host compare case-insensitively; the parser lowered the candidate's already.
  if (!compile(template.hostname.toLowerCase(), HOST_WILDCARD).test(url.hostname)) return false;
  return compile(`${template.pathname}${template.search}`, PATH_WILDCARD).test(`${url.pathname}${url.search}`);
}

function isLoopback(url: URL): boolean {
  return url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
}

function withoutPort(url: URL): string {
  const copy = new URL(url.href);
  copy.port = "";
  return copy.href;
}

export function redirectAllowed(candidate: string, rules: RedirectRules): boolean {
  if (rules.registered.includes(candidate)) return parse(candidate) !== undefined;
  const url = parse(candidate);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return false;
  if (rules.wildcard) {
    for (const pattern of rules.registered) {
      if (pattern.includes("*") && wildcardMatches(pattern, candidate)) return true;
    }
  }
  if (!rules.publicClient || !isLoopback(url)) return false;
  if (rules.registered.length === 0) return true;
  const loose = withoutPort(url);
  return rules.registered.some((uri) => {
    const registered = parse(uri);
    return registered !== undefined && isLoopback(registered) && withoutPort(registered) === loose;
  });
}
