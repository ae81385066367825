// Authenticates `Authorization: Bearer <access key>`: the key's SHA-256 digest is looked up in the in-memory index
// (kept current by the storage watch; `fresh()` waits only when a write is not applied yet), checked for validity,
// and turned into a cached, frozen UserInfo bound to its Principal. No storage read happens per request.

import { errors } from "../apimachinery/errors.ts";
import { digestAccessKey, requestBearerToken } from "../auth/access-key-material.ts";
import { ConnectionDigests } from "../auth/connection-digests.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";
import type { ActivityRecorder } from "./activity-recorder.ts";
import type { AuthIndex, KeyEntry } from "./auth-index.ts";
import { callerOf } from "./caller-of.ts";
import { KEY_NOT_FOUND, type KeyLimits, keyProblem, NOT_AN_API_KEY, REFRESH_TOKEN_KEY_TYPE } from "./key-validity.ts";
import { compileScope } from "./scope.ts";

/** Longer bearer tokens are not keys of ours (supplied keys are at most 512 characters). */
const MAX_TOKEN_LENGTH = 1024;
export const ACCESS_KEY_EXTRA = "management.platform.sh/access-key";
export const ACCESS_KEY_TYPE_EXTRA = "management.platform.sh/access-key-type";

export interface AccessKeyAuthenticatorOptions {
  index: AuthIndex;
  /** Resolves once every committed write is in the index. */
  fresh: () => Promise<void>;
  limits: () => KeyLimits;
  activity: ActivityRecorder;
  now?: () => number;
}

export interface AuthenticateKeyOptions {
  /** Record the key's activity (default true; false for token reviews). */
  touch?: boolean;
  /** The client connection the key came on (AuthenticationRequest.connection). */
  connection?: object;
}

interface Cached {
  directoryVersion: number;
  user: UserInfo;
}

export class AccessKeyAuthenticator implements Authenticator {
  private readonly options: AccessKeyAuthenticatorOptions;
  private readonly now: () => number;
  /** By index entry: a changed key is a new entry, so its cache goes with the old one. */
  private readonly cache = new WeakMap<KeyEntry, Cached>();
  private readonly digests = new ConnectionDigests(digestAccessKey);

  constructor(options: AccessKeyAuthenticatorOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  authenticate(request: AuthenticationRequest): Promise<UserInfo> | undefined {
    const token = requestBearerToken(request);
    if (token === undefined) return undefined;
    return this.authenticateToken(token, { connection: request.connection });
  }

  /**
   * The caller of a plain key; throws the 401 that says why not. `touch: false` records no activity (selves);
   * `connection` lets a keep-alive connection's repeated key skip its digest (ConnectionDigests).
   */
  async authenticateToken(token: string, options: AuthenticateKeyOptions = {}): Promise<UserInfo> {
    const { touch = true, connection } = options;
    if (!token || token.length > MAX_TOKEN_LENGTH) throw errors.unauthorized("invalid bearer token");
    const digest = this.digests.digest(token, connection);
    await this.options.fresh();
    const { index } = this.options;
    const key = index.key(digest);
    if (!key) throw errors.unauthorized(KEY_NOT_FOUND);
    // An application holds it to refresh its sign-in; acting as the person through the API is not what it was given.
    if (key.type === REFRESH_TOKEN_KEY_TYPE) throw errors.unauthorized(NOT_AN_API_KEY);
    const now = this.now();
    const problem = keyProblem(key, index, now, this.options.limits(), this.options.activity.lastSeen(key.name));
    if (problem) throw errors.unauthorized(problem);
    const user = this.userFor(key);
    if (touch) this.options.activity.touch(key, now);
    return user;
  }

  private userFor(key: KeyEntry): UserInfo {
    const version = this.options.index.directoryVersion;
    const cached = this.cache.get(key);
    if (cached && cached.directoryVersion === version) return cached.user;
    const { index } = this.options;
    const user = callerOf({
      index,
      key,
      scope: compileScope(key.scope),
      user: key.user ? index.user(key.user) : undefined,
      team: key.team ? index.team(key.team) : undefined,
      groups: key.groups,
      extra: { [ACCESS_KEY_EXTRA]: [key.name], [ACCESS_KEY_TYPE_EXTRA]: [key.type] },
    });
    this.cache.set(key, { directoryVersion: version, user });
    return user;
  }
}
