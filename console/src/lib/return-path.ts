// Where the browser goes after login: a path of this platform only (no scheme, no host, no "//" or "/\"), the same
// rule the server applies to SSO return paths (src/platform/sso-routes.ts), so /login?return= is no open redirect.

export function safeReturnPath(value: string | null | undefined): string | undefined {
  if (!value?.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return undefined;
  if (/[\r\n\t\\]/.test(value) || value.length > 2048) return undefined;
  const parsed = new URL(value, "https://platform.invalid");
  if (parsed.origin !== "https://platform.invalid") return undefined;
  if (parsed.pathname === "/login" || parsed.pathname.startsWith("/login/")) return undefined;
  return `${parsed.pathname}${parsed.search}${parsed.hash}`;
}

/** The login page that returns to `path` afterwards. */
export function loginPath(path: string): string {
  const target = safeReturnPath(path);
  return target && target !== "/" ? `/login?return=${encodeURIComponent(target)}` : "/login";
}
