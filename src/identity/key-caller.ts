// The access-key resource's view of callers and owners, answered from the principal and the auth index.

import type { AccessKeyCaller, AccessKeyOwners } from "../apis/management/v1/ownedaccesskey.ts";
import type { RequestContext } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { ADMIN_ROLE, isSystem, principalOf, VIEWER_ROLE } from "./principal.ts";

export interface KeyCaller extends AccessKeyCaller {
  /** Admins, viewers and the platform see every key (never its material); others only their own. */
  readsAll(context: RequestContext): boolean;
}

export const keyCaller: KeyCaller = {
  owner(context) {
    const principal = principalOf(context.user);
    if (principal?.kind === "User") return { user: principal.name };
    if (principal?.kind === "Team") return { team: principal.name };
    return undefined;
  },
  managesAll(context) {
    return isSystem(context.user) || principalOf(context.user)?.roles.has(ADMIN_ROLE) === true;
  },
  readsAll(context) {
    return this.managesAll(context) || principalOf(context.user)?.roles.has(VIEWER_ROLE) === true;
  },
};

export function keyOwners(index: AuthIndex, fresh: () => Promise<void>): AccessKeyOwners {
  return {
    async user(name) {
      await fresh();
      const user = index.user(name);
      return (
        user && { uid: user.uid, tokenGeneration: user.tokenGeneration, sessionGeneration: user.sessionGeneration }
      );
    },
    async team(name) {
      await fresh();
      const team = index.team(name);
      return team && { uid: team.uid };
    },
    async digestInUse(digest) {
      await fresh();
      return index.hasDigest(digest);
    },
  };
}
