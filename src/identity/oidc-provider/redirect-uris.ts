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

/** What a "*" may stand for: characters it may hold, and whether it may stand for nothing. */
interface Wildcard {
  holds(text: string, from: number, to: number): boolean;
  least: 0 | 1;
}

/** In a host: letters, digits and "-", at least one. */
const HOST_WILDCARD: Wildcard = { holds: (text, from, to) => /^[A-Za-z0-9-]*$/.test(text.slice(from, to)), least: 1 };
/** In a path and query: anything up to the next "?" or "#". */
const PATH_WILDCARD: Wildcard = { holds: (text, from, to) => !/[?#]/.test(text.slice(from, to)), least: 0 };

/**
 * Whether `text` is `pattern` with each "*" standing for a run `wildcard` holds. Each literal part between the stars
 * is taken at its first place after the one before: a later place only widens the gap before it, which can then only
 * hold less. Linear in the text for a given pattern; the regular expression this replaces backtracked through every
 * split of the text between the stars, cubic with three of them, and a client's redirect_uri reaches it unsigned.
 */
function globMatches(pattern: string, text: string, wildcard: Wildcard): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return text === pattern;
  const first = parts[0];
  const last = parts[parts.length - 1];
  const end = text.length - last.length;
  if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at + wildcard.least);
    if (found < 0 || found + part.length > end || !wildcard.holds(text, at, found)) return false;
    at = found + part.length;
  }
  return end - at >= wildcard.least && wildcard.holds(text, at, end);
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
  if (!globMatches(template.hostname.toLowerCase(), url.hostname, HOST_WILDCARD)) return false;
  return globMatches(`${template.pathname}${template.search}`, `${url.pathname}${url.search}`, PATH_WILDCARD);
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
