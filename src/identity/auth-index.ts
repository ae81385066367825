// In-memory indexes that authentication and authorization read on every request, kept current by a StoreInformer:
// access keys by digest and name, users by name and username, teams, and the owner and access rules of every
// object of the management group. No request reads storage to authenticate or authorize.

import type { AccessRule } from "../apis/management/v1/access-checks.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import type { AccessKeyScope, OwnedAccessKey } from "../apis/management/v1/ownedaccesskey-schema.ts";
import {
  SESSION_GENERATION_ANNOTATION,
  storedDigest,
  TEAM_UID_ANNOTATION,
  TOKEN_GENERATION_ANNOTATION,
  USER_UID_ANNOTATION,
} from "../apis/management/v1/ownedaccesskey-secrets.ts";
import type { Team } from "../apis/management/v1/team.ts";
import type { User } from "../apis/management/v1/user.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import { parseKey } from "../registry/keys.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";

export interface KeyEntry {
  name: string;
  uid: string;
  digest: string;
  user?: string;
  team?: string;
  subject?: string;
  groups: string[];
  type: string;
  disabled: boolean;
  /** Seconds; 0 = none. */
  ttlSeconds: number;
  ttlAfterLastActivity: boolean;
  createdMs: number;
  lastActivityMs?: number;
  scope?: AccessKeyScope;
  /** Uid of the user (or team) the key was issued to. */
  ownerUid?: string;
  /** The user's tokenGeneration when the key was issued. */
  tokenGeneration: number;
  /** The user's session generation when the key was issued (see UserEntry). */
  sessionGeneration: number;
  deleting: boolean;
  /** A Login key's identity.extraClaims (the claims its connector's allowedExtraClaims let through). */
  extraClaims?: Readonly<Record<string, string[]>>;
}

export interface UserEntry {
  name: string;
  uid: string;
  username: string;
  displayName?: string;
  email?: string;
  /** spec.email equals spec.verifiedEmail (an address a provider or an admin verified; the user cannot set it). */
  emailVerified: boolean;
  subject?: string;
  /** Claims an admin added (spec.extraClaims), for the platform's ID tokens. */
  extraClaims: Readonly<Record<string, string>>;
  groups: string[];
  /** Groups remembered from the user's last single sign-on (spec.ssoGroups). */
  ssoGroups: string[];
  clusterRoles: string[];
  disabled: boolean;
  tokenGeneration: number;
  /** Raised by the platform when the user's sessions end for good (disabling the user, a password change). */
  sessionGeneration: number;
}

export interface TeamEntry {
  name: string;
  uid: string;
  username?: string;
  displayName?: string;
  users: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  clusterRoles: string[];
}

/** Who owns an object and who else may do what on it. */
export interface AccessEntry {
  owner?: { user?: string; team?: string };
  access: AccessRule[];
  /** A virtual cluster instance's spec.runtime: whose runtime keys report for it (runtime-binding.ts). */
  runtime?: { user?: string; team?: string };
}

const PREFIX = `/${GROUP}/`;
const KEYS = `${PREFIX}ownedaccesskeys/`;
const USERS = `${PREFIX}users/`;
const TEAMS = `${PREFIX}teams/`;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
const roleNames = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.map((role) => role?.name).filter((name): name is string => typeof name === "string")
    : [];
/** E-mail addresses compare case-insensitively (what providers and mail systems do in practice). */
export const sameAddress = (a: string | undefined, b: string | undefined): boolean =>
  typeof a === "string" && typeof b === "string" && a !== "" && a.toLowerCase() === b.toLowerCase();
const stringValues = (value: unknown): Record<string, string> =>
  value && typeof value === "object"
    ? Object.fromEntries(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
      )
    : {};
/** A generation annotation's number; 0 when absent or not a number. */
const generationOf = (value: string | undefined): number => {
  const number = Number(value ?? 0);
  return Number.isSafeInteger(number) && number > 0 ? number : 0;
};
const millis = (value: unknown): number | undefined => {
  const ms = typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
};

function keyEntry(key: OwnedAccessKey): KeyEntry | undefined {
  const digest = storedDigest(key);
  const spec = key.spec ?? {};
  if (!digest || !key.metadata.name) return undefined;
  const annotations = key.metadata.annotations ?? {};
  const generation = generationOf(annotations[TOKEN_GENERATION_ANNOTATION]);
  return {
    name: key.metadata.name,
    uid: key.metadata.uid ?? "",
    digest,
    user: spec.user || undefined,
    team: spec.team || undefined,
    subject: spec.subject || undefined,
    groups: strings(spec.groups),
    type: spec.type ?? "",
    disabled: spec.disabled === true,
    ttlSeconds: typeof spec.ttl === "number" && spec.ttl > 0 ? spec.ttl : 0,
    ttlAfterLastActivity: spec.ttlAfterLastActivity === true,
    createdMs: millis(key.metadata.creationTimestamp) ?? 0,
    lastActivityMs: millis(key.status?.lastActivity),
    scope: spec.scope && structuredClone(spec.scope),
    ownerUid: annotations[USER_UID_ANNOTATION] ?? annotations[TEAM_UID_ANNOTATION],
    tokenGeneration: generation,
    sessionGeneration: generationOf(annotations[SESSION_GENERATION_ANNOTATION]),
    deleting: Boolean(key.metadata.deletionTimestamp),
    ...(spec.type === "Login" ? loginClaims(spec.identity?.extraClaims) : {}),
  };
}

/** A Login key's extra claims, when it has any: lists of strings by claim name. */
function loginClaims(value: unknown): { extraClaims?: Record<string, string[]> } {
  if (!value || typeof value !== "object") return {};
  const claims = Object.fromEntries(
    Object.entries(value).flatMap(([name, values]) => (Array.isArray(values) ? [[name, strings(values)]] : [])),
  );
  return Object.keys(claims).length > 0 ? { extraClaims: claims } : {};
}

function userEntry(user: User): UserEntry {
  const spec = user.spec ?? {};
  const name = user.metadata.name ?? "";
  return {
    name,
    uid: user.metadata.uid ?? "",
    username: spec.username || name,
    displayName: spec.displayName,
    email: spec.email,
    emailVerified: sameAddress(spec.email, spec.verifiedEmail),
    subject: spec.subject,
    extraClaims: stringValues(spec.extraClaims),
    groups: strings(spec.groups),
    ssoGroups: strings(spec.ssoGroups),
    clusterRoles: roleNames(spec.clusterRoles),
    disabled: spec.disabled === true,
    tokenGeneration: typeof spec.tokenGeneration === "number" ? spec.tokenGeneration : 0,
    sessionGeneration: generationOf(user.metadata.annotations?.[SESSION_GENERATION_ANNOTATION]),
  };
}

function teamEntry(team: Team): TeamEntry {
  const spec = team.spec ?? {};
  return {
    name: team.metadata.name ?? "",
    uid: team.metadata.uid ?? "",
    username: spec.username,
    displayName: spec.displayName,
    users: new Set(strings(spec.users)),
    groups: new Set(strings(spec.groups)),
    clusterRoles: roleNames(spec.clusterRoles),
  };
}

type UserOrTeam = { user?: string; team?: string };
const userOrTeam = (value: UserOrTeam | undefined) => (value && (value.user || value.team) ? value : undefined);

function accessEntry(object: { spec?: unknown }): AccessEntry | undefined {
  const spec = object.spec as { owner?: UserOrTeam; access?: unknown; runtime?: UserOrTeam } | undefined;
  const access = Array.isArray(spec?.access) ? (spec.access as AccessRule[]) : [];
  const owner = userOrTeam(spec?.owner);
  const runtime = userOrTeam(spec?.runtime);
  if (!owner && !access.length && !runtime) return undefined;
  return structuredClone(runtime ? { owner, access, runtime } : { owner, access });
}

const nameOf = (object: object) => (object as { metadata?: { name?: string } }).metadata?.name ?? "";

/** Whether two entries of one key differ at most in the activity recorded on it. */
function sameButActivity(before: KeyEntry, after: KeyEntry): boolean {
  return JSON.stringify({ ...before, lastActivityMs: 0 }) === JSON.stringify({ ...after, lastActivityMs: 0 });
}

export class AuthIndex implements InformerHandler {
  readonly prefixes = [PREFIX];
  private readonly keysByDigest = new Map<string, KeyEntry>();
  private readonly keysByName = new Map<string, KeyEntry>();
  /** Digests two keys share (possible only through a race between two creates): neither authenticates. */
  private readonly sharedDigests = new Set<string>();
  /** Login keys with extra claims, by name (few: only connectors with allowedExtraClaims make them). */
  private readonly claimKeys = new Map<string, KeyEntry>();
  private readonly users = new Map<string, UserEntry>();
  private readonly teams = new Map<string, TeamEntry>();
  private readonly access = new Map<string, AccessEntry>();
  private readonly listeners = new Set<(event: WatchEvent) => void>();
  private readonly callerListeners = new Set<() => void>();
  /** Bumped on every user or team change: cached principals compare it. */
  directoryVersion = 0;
  /** How a watched record becomes an object; see decodeWith(). */
  private decode: (record: StoredRecord) => object = (record) => JSON.parse(record.value);

  /**
   * Reads watched records through `decode` instead of parsing each one here: the registry's shared decode, which
   * the other watchers of the same record (the garbage collector, API watches) reuse. The object is only read; the
   * entries copy the parts they keep (a key's scope, access rules and owner), so nothing that later reads an entry
   * can change what the other watchers see.
   */
  decodeWith(decode: (record: StoredRecord) => object): void {
    this.decode = decode;
  }

  key(digest: string): KeyEntry | undefined {
    return this.sharedDigests.has(digest) ? undefined : this.keysByDigest.get(digest);
  }

  keyByName(name: string): KeyEntry | undefined {
    return this.keysByName.get(name);
  }

  hasDigest(digest: string): boolean {
    return this.keysByDigest.has(digest);
  }

  allKeys(): IterableIterator<KeyEntry> {
    return this.keysByName.values();
  }

  user(name: string): UserEntry | undefined {
    return this.users.get(name);
  }

  /** The extra claims of the user's newest single sign-on login that has any. */
  loginClaimsOf(user: string): Readonly<Record<string, string[]>> | undefined {
    let newest: KeyEntry | undefined;
    for (const key of this.claimKeys.values()) {
      if (key.user === user && !key.deleting && (!newest || key.createdMs > newest.createdMs)) newest = key;
    }
    return newest?.extraClaims;
  }

  allUsers(): IterableIterator<UserEntry> {
    return this.users.values();
  }

  /** A login name (spec.username, which defaults to the object name); an ambiguous username matches nobody. */
  userByUsername(username: string): UserEntry | undefined {
    let found: UserEntry | undefined;
    for (const user of this.users.values()) {
      if (user.username !== username) continue;
      if (found) return undefined;
      found = user;
    }
    return found;
  }

  team(name: string): TeamEntry | undefined {
    return this.teams.get(name);
  }

  /** Teams a user belongs to: listed by name, or through one of `groups`. */
  teamsOf(user: string, groups: readonly string[]): TeamEntry[] {
    const out: TeamEntry[] = [];
    for (const team of this.teams.values()) {
      if (team.users.has(user) || groups.some((group) => team.groups.has(group))) out.push(team);
    }
    return out;
  }

  /** Owner and access rules of the object stored under `key` (`/<group>/<plural>/<namespace>/<name>`). */
  accessOf(key: string): AccessEntry | undefined {
    return this.access.get(key);
  }

  /** Storage keys of the objects with an owner or access rules (what a rules review asks about by name). */
  accessKeys(): IterableIterator<string> {
    return this.access.keys();
  }

  /** Called after each applied change (password cleanup, tests). */
  onChange(listener: (event: WatchEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reset(records: StoredRecord[]): void {
    this.keysByDigest.clear();
    this.keysByName.clear();
    this.sharedDigests.clear();
    this.claimKeys.clear();
    this.users.clear();
    this.teams.clear();
    this.access.clear();
    for (const record of records) this.put(record.key, JSON.parse(record.value));
    this.directoryVersion++;
  }

  /**
   * Called after each change that may alter who a credential stands for or what it may do: every change but the
   * activity recorded on a key (status.lastActivity), which keys in use write often (open watches re-check on it).
   */
  onCallerChange(listener: () => void): () => void {
    this.callerListeners.add(listener);
    return () => this.callerListeners.delete(listener);
  }

  apply(event: WatchEvent): void {
    const object = this.decode(event.record);
    const before = event.record.key.startsWith(KEYS) ? this.keysByName.get(nameOf(object)) : undefined;
    if (event.type === "delete") this.remove(event.record.key, object);
    else this.put(event.record.key, object);
    for (const listener of this.listeners) listener(event);
    const after = before && event.type !== "delete" ? this.keysByName.get(before.name) : undefined;
    if (!after || !sameButActivity(before!, after)) for (const listener of this.callerListeners) listener();
  }

  private put(key: string, decoded: object): void {
    const object = decoded as OwnedAccessKey;
    const name = object.metadata?.name ?? "";
    if (key.startsWith(KEYS)) {
      this.removeKey(name);
      const entry = keyEntry(object);
      if (entry) {
        if (this.keysByDigest.has(entry.digest)) this.sharedDigests.add(entry.digest);
        this.keysByDigest.set(entry.digest, entry);
        this.keysByName.set(entry.name, entry);
        if (entry.extraClaims) this.claimKeys.set(entry.name, entry);
      }
    } else if (key.startsWith(USERS)) {
      this.users.set(name, userEntry(object as unknown as User));
      this.directoryVersion++;
    } else if (key.startsWith(TEAMS)) {
      this.teams.set(name, teamEntry(object as unknown as Team));
      this.directoryVersion++;
    }
    const entry = parseKey(key) ? accessEntry(object) : undefined;
    if (entry) this.access.set(key, entry);
    else this.access.delete(key);
  }

  private remove(key: string, decoded: object): void {
    const name = (decoded as OwnedAccessKey).metadata?.name ?? "";
    if (key.startsWith(KEYS)) this.removeKey(name);
    else if (key.startsWith(USERS)) {
      this.users.delete(name);
      this.directoryVersion++;
    } else if (key.startsWith(TEAMS)) {
      this.teams.delete(name);
      this.directoryVersion++;
    }
    this.access.delete(key);
  }

  private removeKey(name: string): void {
    const old = this.keysByName.get(name);
    if (!old) return;
    this.keysByName.delete(name);
    this.claimKeys.delete(name);
    if (this.keysByDigest.get(old.digest) === old) this.keysByDigest.delete(old.digest);
    if (this.sharedDigests.has(old.digest)) {
      // Another key still holds it: it is unique again once only one remains.
      const remaining = [...this.keysByName.values()].filter((k) => k.digest === old.digest);
      if (remaining.length <= 1) this.sharedDigests.delete(old.digest);
      if (remaining.length >= 1) this.keysByDigest.set(old.digest, remaining[0]);
    }
  }
}
