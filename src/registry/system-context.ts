// The request context of the server's own work (bootstrap, garbage collector, controllers): allowed everything.

import type { RequestContext } from "./types.ts";

export function systemContext(user: string, agent: string): RequestContext {
  return {
    user: { name: user, groups: ["system:masters"] },
    authorizer: { authorize: async () => ({ allowed: true }) },
    warnings: [],
    userAgent: agent,
    now: new Date(),
  };
}
