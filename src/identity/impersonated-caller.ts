// What impersonating means on the platform (`kubectl --as dave`): the generic layer (src/http/impersonation.ts) has
// already checked the verb `impersonate` on every part with the platform's authorizer, which grants it only to
// admins (rights.ts: no ownership or access rule grants a core-group verb) and only through a key whose scope allows
// it. This makes the requested identity one of the platform's callers:
//  - `dave` naming a User: dave's rights (cluster roles, teams, projects, own objects), as if he had sent it; a
//    disabled user cannot be impersonated (403);
//  - `team:ops` naming a Team: the team's rights, as a team key has them;
//  - any other name (a service account, a user not yet created): a bare subject with no rights of its own;
//  - Impersonate-Group replaces the user's own groups (the teams that list him by name still count), as upstream
//    takes requested groups as the whole list; "system:" groups are dropped, as for every platform caller;
//  - Impersonate-Uid must be the user's (or team's) uid;
//  - the credential stays the impersonator's: its access key's scope bounds every request made as dave too, so a
//    scoped key gains nothing by impersonating (a credential does only what it was issued for).

import { errors } from "../apimachinery/errors.ts";
import type { ImpersonationRequest, ImpersonationResolver } from "../http/impersonation.ts";
import type { UserInfo } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { callerOf } from "./caller-of.ts";
import { bindPrincipal, principalOf } from "./principal.ts";

const TEAM_PREFIX = "team:";
const USERS = { group: "", resource: "users" };

export interface ImpersonationOptions {
  index: AuthIndex;
  /** Resolves once every committed write is in the index. */
  fresh: () => Promise<void>;
}

export function platformImpersonation(options: ImpersonationOptions): ImpersonationResolver {
  const { index, fresh } = options;
  return async (request: ImpersonationRequest, impersonator: UserInfo) => {
    const by = principalOf(impersonator);
    const refuse = (reason: string) =>
      errors.forbidden(USERS, request.user, `User "${impersonator.name}" cannot impersonate it: ${reason}`);
    if (!by) throw refuse("only platform callers with an access key may impersonate");
    await fresh();
    const team = request.user.startsWith(TEAM_PREFIX) ? index.team(request.user.slice(TEAM_PREFIX.length)) : undefined;
    const user = team ? undefined : index.user(request.user);
    if (user?.disabled) throw refuse("the user is disabled");
    const uid = user?.uid ?? team?.uid;
    if (request.uid !== undefined && uid !== undefined && request.uid !== uid) {
      throw refuse(`Impersonate-Uid "${request.uid}" is not the uid of ${team ? "team" : "user"} "${request.user}"`);
    }
    const caller = callerOf({
      index,
      key: by.key,
      scope: by.scope,
      user: user && request.groups ? { ...user, groups: [] } : user,
      team,
      subject: request.user,
      groups: request.groups ?? [],
      extra: request.extra ?? {},
    });
    if (user || team || request.uid === undefined) return caller;
    // A bare subject takes the uid it was given (it has no object to take one from).
    const withUid: UserInfo = Object.freeze({ ...caller, uid: request.uid });
    bindPrincipal(withUid, { ...principalOf(caller)!, uid: request.uid });
    return withUid;
  };
}
