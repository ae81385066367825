// The `oidc-provider` package (with koa and its dependencies, about 10 MiB of heap and code), loaded the first time
// the platform's OpenID provider serves a request: a platform whose Config never enables it never loads it.
// Its error classes come from their own small module, which the package itself uses (same classes, same instanceof).

import * as errors from "oidc-provider/lib/helpers/errors.js";

export { errors };

type OidcProviderModule = typeof import("oidc-provider");

let loaded: OidcProviderModule | undefined;

/** Loads the package once. */
export async function loadOidcProvider(): Promise<OidcProviderModule> {
  loaded ??= await import("oidc-provider");
  return loaded;
}

/** The running provider's request context (Provider.ctx), if the package is loaded and a request is in flight. */
export function providerContext(): OidcProviderModule["default"]["ctx"] | undefined {
  return loaded?.default.ctx;
}
