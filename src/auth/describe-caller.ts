// The answer of `selves`: the caller (or the key in spec.accessKey) as its principal sees it.

import { errors, isStatusError } from "../apimachinery/errors.ts";
import type { DescribeCaller, SelfStatus } from "../apis/management/v1/self.ts";
import type { UserInfo } from "../registry/types.ts";
import type { TeamEntry } from "./auth-index.ts";
import { principalOf } from "./principal.ts";

export interface DescribeCallerOptions {
  /** Authenticates a plain key without recording activity. */
  authenticate(token: string): Promise<UserInfo>;
  settings(): { platformHost: string; projectNamespacePrefix: string };
}

const team = (entry: TeamEntry) => ({ name: entry.name, username: entry.username, displayName: entry.displayName });

export function describeCaller(options: DescribeCallerOptions): DescribeCaller {
  return async (context, accessKey) => {
    let user = context.user;
    if (accessKey !== undefined) {
      try {
        user = await options.authenticate(accessKey);
      } catch (error) {
        if (isStatusError(error) && error.code === 401) throw errors.badRequest(`spec.accessKey: ${error.message}`);
        throw error;
      }
    }
    const settings = options.settings();
    const status: SelfStatus = {
      groups: [...user.groups],
      platformHost: settings.platformHost,
      projectNamespacePrefix: settings.projectNamespacePrefix,
      subject: user.name,
    };
    const principal = principalOf(user);
    if (!principal) return status;
    status.uid = principal.uid;
    status.accessKey = principal.key.name;
    status.accessKeyType = principal.key.type;
    if (principal.key.scope) status.accessKeyScope = principal.key.scope;
    if (principal.user) {
      const { name, username, displayName, email, subject } = principal.user;
      status.user = { name, username, displayName, email, teams: principal.teams.map(team) };
      status.subject = subject || username;
    } else if (principal.team) {
      status.team = team(principal.team);
      status.subject = principal.team.username || principal.team.name;
    }
    return status;
  };
}
