// Strips a configured mount prefix (e.g. `/kubernetes/management`, the spec's {api_root}) from a request URL, so
// every route is served both at the root and under each prefix.

/** Returns the URL without the first matching prefix; unchanged when none matches. Keeps the query string. */
export function stripPathPrefix(url: string, prefixes: readonly string[]): string {
  for (const prefix of prefixes) {
    if (!url.startsWith(prefix)) continue;
    const next = url.charCodeAt(prefix.length);
    // Only whole segments: "/kubernetes/managementX" is not under the prefix. 47 "/", 63 "?".
    if (Number.isNaN(next)) return "/";
    if (next === 47) return url.slice(prefix.length);
    if (next === 63) return `/${url.slice(prefix.length)}`;
  }
  return url;
}
