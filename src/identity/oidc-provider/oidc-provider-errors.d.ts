// Types of oidc-provider's error module, imported on its own (oidc-provider-module.ts): the package's own types
// declare the classes only on its entry point.

declare module "oidc-provider/lib/helpers/errors.js" {
  import type { errors } from "oidc-provider";
  export const OIDCProviderError: typeof errors.OIDCProviderError;
  export const InvalidRequest: typeof errors.InvalidRequest;
  export const InvalidGrant: typeof errors.InvalidGrant;
}
