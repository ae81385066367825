// Where a browser may be sent back to after a login or logout: a path of this platform, never another site. One
// checker for the server (SSO return paths, callbacks) and the web console (/login?return=), so both refuse the same
// open-redirect forms. Browsers (WHATWG URL) strip tabs and newlines, turn "\" into "/", resolve "." and ".."
// segments (also written %2e), and read a leading "//" as another host; servers and proxies further along may
// decode %2f and %5c once more. So the value is checked in every decoded form, not only as written:
//   - it starts with one "/" (no scheme such as https: or javascript:, no host, no "//" or "/\");
//   - no form holds a control character, a backslash, a "." or ".." segment, "//" at the start, or "@" in the path;
//   - each percent-decoding must be valid UTF-8 (overlong forms such as %c0%af are not), settling within 3 rounds;
//   - resolved against any origin it stays on that origin, and what comes back (the normal form, the only thing
//     ever redirected to) passes the same checks.
// Pure: no project imports, no Node APIs (the console bundles it).

/** Longest return path accepted (a path and query the console makes stays far below). */
export const MAX_RETURN_PATH_LENGTH = 2048;

const PROBE_ORIGIN = "https://platform.invalid";
const DECODE_ROUNDS = 3;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const FORBIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\\]/;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/** The value and each percent-decoded form of it, until it settles; undefined when a decoding is not valid UTF-8. */
function decodedForms(value: string): string[] | undefined {
  const forms = [value];
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    const last = forms[forms.length - 1];
    let next: string;
    try {
      next = decodeURIComponent(last);
    } catch {
      return undefined;
    }
    if (next === last) return forms;
    forms.push(next);
  }
  // Still changing after the last round: encoded deeper than any path the platform writes.
  return undefined;
}

/** The path part of a form (before "?" or "#"). */
function pathOf(form: string): string {
  const end = form.search(/[?#]/);
  return end < 0 ? form : form.slice(0, end);
}

function formIsSafe(form: string): boolean {
  if (!form.startsWith("/") || form.startsWith("//") || FORBIDDEN_CHARACTERS.test(form)) return false;
  const path = pathOf(form);
  return !DOT_SEGMENT.test(path) && !path.includes("@");
}

function everyFormIsSafe(value: string): boolean {
  const forms = decodedForms(value);
  return forms?.every(formIsSafe) === true;
}

/**
 * The normal form of `value` when it is a path of this platform (path, query and fragment), else undefined. An
 * empty or missing value is undefined too; callers say what an absent return path means.
 */
export function safeReturnPath(value: string | null | undefined): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > MAX_RETURN_PATH_LENGTH) return undefined;
  if (!everyFormIsSafe(value)) return undefined;
  let resolved: URL;
  try {
    resolved = new URL(value, PROBE_ORIGIN);
  } catch {
    return undefined;
  }
  if (resolved.origin !== PROBE_ORIGIN) return undefined;
  const normal = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  return everyFormIsSafe(normal) ? normal : undefined;
}
