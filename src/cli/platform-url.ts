// The platform address a user types, normalised once at login: https:// when no scheme is given, no trailing slash,
// no credentials, query or fragment, and the API prefix dropped (a kubeconfig's server URL works too).

import { PLATFORM_API_PREFIX } from "../virtualcluster/connect/platform-api-prefix.ts";
import { CommandError } from "./command-error.ts";

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

export interface NormalizeOptions {
  /** Accept http:// (the access key then travels unencrypted). */
  allowHttp?: boolean;
}

/** Normalises a platform URL; throws a CommandError that says what to change. */
export function normalizePlatformUrl(input: string, options: NormalizeOptions = {}): string {
  const text = input.trim();
  if (text === "") throw new CommandError("the platform URL is empty");
  const withScheme = SCHEME.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CommandError(`"${input}" is not a valid URL (expected e.g. https://platform.example.com)`);
  }
  if (url.protocol === "http:" && !options.allowHttp) {
    throw new CommandError(
      `refusing plain http for ${url.host}: the access key would travel unencrypted (use https://, or --allow-http)`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new CommandError(`"${input}": only https:// URLs are supported`);
  }
  if (url.hostname === "") throw new CommandError(`"${input}" has no host name`);
  if (url.username || url.password) {
    throw new CommandError(`"${input}": put credentials in --access-key or --username, not in the URL`);
  }
  if (url.search || url.hash) throw new CommandError(`"${input}": the platform URL takes no query or fragment`);
  let path = url.pathname.replace(/\/+$/, "");
  // The API prefix is kept out of the stored host.
  while (path.endsWith(PLATFORM_API_PREFIX)) path = path.slice(0, -PLATFORM_API_PREFIX.length).replace(/\/+$/, "");
  return `${url.protocol}//${url.host}${path}`;
}
