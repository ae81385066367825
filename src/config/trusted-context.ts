// Request contexts of the platform's own config work (the file source writing, the controller reading). Reads in
// such a context are not redacted, and writes pass even when disableConfigEndpoint refuses API writes. Membership
// is by object identity, so no API request can claim it.

import { systemContext } from "../registry/system-context.ts";
import type { RequestContext } from "../registry/types.ts";

export const CONFIG_SYSTEM_USER = "system:platform-config";

const trusted = new WeakSet<RequestContext>();

/** A fresh trusted context (one per operation, so its "now" is current). */
export function trustedConfigContext(agent: string): RequestContext {
  const context = systemContext(CONFIG_SYSTEM_USER, agent);
  trusted.add(context);
  return context;
}

export function isTrustedConfigContext(context: RequestContext): boolean {
  return trusted.has(context);
}
