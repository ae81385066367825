// Which non-resource paths are served without authentication (health checks, /version, login endpoints).

/** "/x" covers "/x" and "/x/..."; "/x/*" covers "/x/...". */
export function publicPathMatcher(paths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const path of paths) {
    if (path.endsWith("/*")) prefixes.push(path.slice(0, -1));
    else {
      exact.add(path);
      prefixes.push(`${path}/`);
    }
  }
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix));
}
