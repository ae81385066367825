// Where the browser goes after login: a path of this platform only, by the same checker the server applies to
// return paths (src/utils/safe-return-path.ts: no scheme, no host, no "//" or "/\" in any encoding, no dot
// segments), so /login?return= is no open redirect. The login page itself is no destination (a loop).

import { safeReturnPath as platformPath } from "../../../src/utils/safe-return-path.ts";

export function safeReturnPath(value: string | null | undefined): string | undefined {
  const path = platformPath(value);
  if (path === undefined) return undefined;
  const pathname = path.replace(/[?#].*$/, "");
  if (pathname === "/login" || pathname.startsWith("/login/")) return undefined;
  return path;
}

/** The login page that returns to `path` afterwards. */
export function loginPath(path: string): string {
  const target = safeReturnPath(path);
  return target && target !== "/" ? `/login?return=${encodeURIComponent(target)}` : "/login";
}
