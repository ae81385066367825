// The platform's users as the OpenID provider's accounts: the subject is the user's uid (stable across renames of
// the username), the claims come from the directory (auth index): email_verified is true only for an address a
// provider or an admin verified (spec.verifiedEmail), never for one the user set; extra claims are the allowed
// claims of the user's newest single sign-on login with the admin's spec.extraClaims over them, and never one of
// the provider's own claims (RESERVED_CLAIMS). The rules that end a user's tokens live here:
// a deleted or disabled user has no account (no code exchange, refresh or userinfo), and a grant remembers the
// user's tokenGeneration and session generation when it was written, so raising either (a tokenGeneration bump, a
// password change, disabling the user) makes the grant, and with it every token issued under it, unknown for good.

import type { AdapterPayload } from "oidc-provider";
import { RESERVED_CLAIMS } from "../../apis/management/v1/reserved-claims.ts";
import type { AuthIndex, UserEntry } from "../auth-index.ts";

export interface OidcClaims {
  sub: string;
  preferred_username: string;
  name: string;
  email?: string;
  email_verified?: boolean;
  groups: string[];
  /** Extra claims: an SSO login's lists of strings, an admin's strings. */
  [claim: string]: unknown;
}

export interface OidcAccountsOptions {
  index: AuthIndex;
  /** Resolves once the index has seen every committed write. */
  fresh: () => Promise<void>;
  /** The claim names single sign-on may pass on now (every OIDC connector's allowedExtraClaims). */
  ssoClaimNames?: () => readonly string[];
}

interface GrantStamp {
  generation: number;
  /** Absent in grants written before session generations existed: 0. */
  sessions?: number;
}

export class OidcAccounts {
  readonly #index: AuthIndex;
  readonly #fresh: () => Promise<void>;
  readonly #ssoClaimNames: () => readonly string[];
  #byUid = new Map<string, UserEntry>();
  #builtAt = -1;
  #adminClaimNames: string[] = [];

  constructor(options: OidcAccountsOptions) {
    this.#index = options.index;
    this.#fresh = options.fresh;
    this.#ssoClaimNames = options.ssoClaimNames ?? (() => []);
  }

  /** The user with this uid, as the index knows it now. */
  userByUid(uid: string): UserEntry | undefined {
    this.#rebuild();
    return this.#byUid.get(uid);
  }

  /** Every extra claim name a token may carry now, sorted: the provider declares them (claims_supported). */
  extraClaimNames(): string[] {
    this.#rebuild();
    const names = new Set([...this.#ssoClaimNames(), ...this.#adminClaimNames]);
    return [...names].filter((name) => !RESERVED_CLAIMS.has(name)).sort();
  }

  #rebuild(): void {
    if (this.#builtAt === this.#index.directoryVersion) return;
    const users = [...this.#index.allUsers()];
    this.#byUid = new Map(users.map((user) => [user.uid, user]));
    this.#adminClaimNames = [...new Set(users.flatMap((user) => Object.keys(user.extraClaims)))];
    this.#builtAt = this.#index.directoryVersion;
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
    if (user.email) {
      claims.email = user.email;
      claims.email_verified = user.emailVerified;
    }
    const allowed = new Set(this.#ssoClaimNames());
    for (const [name, values] of Object.entries(this.#index.loginClaimsOf(user.name) ?? {})) {
      if (allowed.has(name) && !RESERVED_CLAIMS.has(name)) claims[name] = [...values];
    }
    for (const [name, value] of Object.entries(user.extraClaims)) {
      if (!RESERVED_CLAIMS.has(name)) claims[name] = value;
    }
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
