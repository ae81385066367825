// The platform's users as the OpenID provider's accounts: the subject is the user's uid (stable across renames of
// the username), the claims come from the directory (auth index), and the rules that end a user's tokens live here:
// a deleted or disabled user has no account (no code exchange, refresh or userinfo), and a grant remembers the
// user's tokenGeneration and session generation when it was written, so raising either (a tokenGeneration bump, a
// password change, disabling the user) makes the grant, and with it every token issued under it, unknown for good.

import type { AdapterPayload } from "oidc-provider";
import type { AuthIndex, UserEntry } from "../auth-index.ts";

export interface OidcClaims {
  sub: string;
  preferred_username: string;
  name: string;
  email?: string;
  groups: string[];
}

export interface OidcAccountsOptions {
  index: AuthIndex;
  /** Resolves once the index has seen every committed write. */
  fresh: () => Promise<void>;
}

interface GrantStamp {
  generation: number;
  /** Absent in grants written before session generations existed: 0. */
  sessions?: number;
}

export class OidcAccounts {
  readonly #index: AuthIndex;
  readonly #fresh: () => Promise<void>;
  #byUid = new Map<string, UserEntry>();
  #builtAt = -1;

  constructor(options: OidcAccountsOptions) {
    this.#index = options.index;
    this.#fresh = options.fresh;
  }

  /** The user with this uid, as the index knows it now. */
  userByUid(uid: string): UserEntry | undefined {
    if (this.#builtAt !== this.#index.directoryVersion) {
      this.#byUid = new Map([...this.#index.allUsers()].map((user) => [user.uid, user]));
      this.#builtAt = this.#index.directoryVersion;
    }
    return this.#byUid.get(uid);
  }

  /** The user behind a subject when it may still get tokens: it exists and is not disabled. */
  async active(uid: string): Promise<UserEntry | undefined> {
    await this.#fresh();
    const user = this.userByUid(uid);
    return user && !user.disabled ? user : undefined;
  }

  /** Every claim the provider may release; it keeps those the granted scopes ask for. */
  claims(user: UserEntry): OidcClaims {
    const teams = this.#index.teamsOf(user.name, user.groups).map((team) => team.name);
    const claims: OidcClaims = {
      sub: user.uid,
      preferred_username: user.username,
      name: user.displayName || user.username,
      groups: [...new Set([...teams, ...user.ssoGroups])].sort(),
    };
    if (user.email) claims.email = user.email;
    return claims;
  }

  /** The adapter's stamp: a grant records the user's tokenGeneration and session generation. */
  stamp(model: string, payload: AdapterPayload): GrantStamp | undefined {
    if (model !== "Grant" || typeof payload.accountId !== "string") return undefined;
    const user = this.userByUid(payload.accountId);
    return user ? { generation: user.tokenGeneration, sessions: user.sessionGeneration } : undefined;
  }

  /** The adapter's check on every read: artifacts of a user who may not get tokens any more read as absent. */
  async valid(model: string, payload: AdapterPayload, stamp: unknown): Promise<boolean> {
    if (typeof payload.accountId !== "string") return true;
    const user = await this.active(payload.accountId);
    if (!user) return false;
    if (model !== "Grant") return true;
    const grant = stamp as GrantStamp | undefined;
    return grant?.generation === user.tokenGeneration && (grant.sessions ?? 0) === user.sessionGeneration;
  }
}
