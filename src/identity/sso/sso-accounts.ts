// What a single sign-on login does with the identity a connector returns, the same for every connector:
//   1. the User: matched by subject, then username, then (verified) e-mail; created unless disableUserCreation;
//      a disabled user is refused;
//   2. spec.ssoGroups: the provider's groups that match a groupsFilters expression (all when there are none);
//   3. teams: one team per group (created unless disableTeamCreation), labelled as SSO teams with the group in an
//      annotation; the user's membership (spec.users) of every SSO team follows its groups on every login;
//   4. a Login OwnedAccessKey whose spec.identity records the connector and the person, never a provider token.

import { createHash } from "node:crypto";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import type { AccessKeyIdentity } from "../../apis/management/v1/ownedaccesskey-schema.ts";
import type { Team } from "../../apis/management/v1/team.ts";
import type { User } from "../../apis/management/v1/user.ts";
import { compileGoRegexp } from "../../config/formats.ts";
import type { SsoSettings } from "../../config/settings.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { AuthIndex, UserEntry } from "../auth-index.ts";
import { type SsoIdentity, SsoRefusal } from "./types.ts";

export const SSO_TEAM_LABEL = `${GROUP}/sso-team`;
export const SSO_GROUP_ANNOTATION = `${GROUP}/sso-group`;
const MANAGER = "virtualcluster-platform-sso";
const MAX_NAME = 63;

export interface SsoAccountsOptions {
  index: AuthIndex;
  fresh: () => Promise<void>;
  store: (plural: string) => GenericStore;
  settings: () => SsoSettings;
}

export interface SsoLoginResult {
  user: UserEntry;
  /** The plain Login key (shown once: cookie or CLI). */
  accessKey: string;
  keyName: string;
  created: boolean;
}

const system = () => systemContext("system:platform-sso", MANAGER);

/** A DNS-1123 name for a username or group (lower case, [a-z0-9-]); a hash suffix when the text had to change. */
export function objectNameFor(text: string, fallback: string): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .replace(/-{2,}/g, "-");
  const base = cleaned || fallback;
  if (base === text && base.length <= MAX_NAME) return base;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 8);
  return `${base.slice(0, MAX_NAME - 9).replace(/-+$/, "")}-${hash}`;
}

/** The groups saved in the user: those matching one of the filters (all when there are none). */
export function filterGroups(groups: readonly string[], filters: readonly string[]): string[] {
  const unique = [...new Set(groups.filter((group) => group !== ""))];
  if (filters.length === 0) return unique;
  const patterns = filters.map((filter) => compileGoRegexp(filter));
  return unique.filter((group) => patterns.some((pattern) => pattern.test(group)));
}

export class SsoAccounts {
  private readonly options: SsoAccountsOptions;

  constructor(options: SsoAccountsOptions) {
    this.options = options;
  }

  async login(connector: { id: string; displayName: string }, identity: SsoIdentity): Promise<SsoLoginResult> {
    const settings = this.options.settings();
    const groups = filterGroups(identity.groups, settings.groupsFilters);
    await this.options.fresh();
    let user = this.match(identity);
    let created = false;
    if (!user) {
      if (settings.disableUserCreation) {
        throw new SsoRefusal(
          "disableUserCreation",
          `there is no user for ${identity.email ?? identity.username} on this platform, and single sign-on does not create users here (auth.disableUserCreation); ask an administrator to create your user`,
        );
      }
      user = await this.createUser(identity, groups);
      created = true;
    }
    if (user.disabled) throw new SsoRefusal("disabled", `user ${user.username} is disabled`);
    if (!created) await this.saveGroups(user, groups);
    await this.syncTeams(user.name, groups, settings.disableTeamCreation);
    const key = await this.issueKey(user, connector, identity, groups);
    return { user, created, ...key };
  }

  /** By subject, then username, then e-mail (only one the provider says is verified); an ambiguous match skips. */
  private match(identity: SsoIdentity): UserEntry | undefined {
    const users = [...this.options.index.allUsers()];
    const only = (found: UserEntry[]) => (found.length === 1 ? found[0] : undefined);
    return (
      only(users.filter((u) => u.subject === identity.userId)) ??
      only(users.filter((u) => u.username === identity.username)) ??
      (identity.email && identity.emailVerified !== false
        ? only(users.filter((u) => u.email !== undefined && u.email.toLowerCase() === identity.email!.toLowerCase()))
        : undefined)
    );
  }

  private async createUser(identity: SsoIdentity, groups: string[]): Promise<UserEntry> {
    const base = objectNameFor(identity.username, "user");
    for (let attempt = 0; attempt < 5; attempt++) {
      const name = attempt === 0 ? base : objectNameFor(`${identity.username}#${attempt}`, "user");
      const body: User = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "User",
        metadata: { name },
        spec: {
          username: identity.username,
          subject: identity.userId,
          displayName: identity.displayName ?? identity.preferredUsername ?? identity.username,
          ...(identity.email ? { email: identity.email } : {}),
          ssoGroups: groups,
        },
      };
      try {
        await this.options.store("users").create(system(), undefined, body, { fieldManager: MANAGER });
      } catch (error) {
        if (isStatusError(error) && error.reason === "AlreadyExists") continue;
        throw error;
      }
      await this.options.fresh();
      const entry = this.options.index.user(name);
      if (entry) return entry;
    }
    throw new Error(`no free user name for ${identity.username}`);
  }

  private async saveGroups(user: UserEntry, groups: string[]): Promise<void> {
    const stored = (await this.options.store("users").get(system(), { name: user.name })) as User;
    const current = stored.spec?.ssoGroups ?? [];
    if (JSON.stringify(current) === JSON.stringify(groups)) return;
    await this.options
      .store("users")
      .patch(
        system(),
        { name: user.name },
        "merge",
        { metadata: { uid: user.uid }, spec: { ssoGroups: groups } },
        { fieldManager: MANAGER },
      );
  }

  /** Membership of every SSO team follows the groups; missing teams are created unless creation is off. */
  private async syncTeams(user: string, groups: string[], disableCreation: boolean): Promise<void> {
    const store = this.options.store("teams");
    const list = await store.list(system(), { labelSelector: `${SSO_TEAM_LABEL}=true` });
    const teams = list.items as Team[];
    const byGroup = new Map<string, Team>();
    for (const team of teams) {
      const group = team.metadata.annotations?.[SSO_GROUP_ANNOTATION];
      if (group !== undefined) byGroup.set(group, team);
    }
    const wanted = new Set(groups);
    for (const team of teams) {
      const group = team.metadata.annotations?.[SSO_GROUP_ANNOTATION];
      const member = team.spec?.users?.includes(user) === true;
      if (group !== undefined && !wanted.has(group) && member) await this.setMember(team, user, false);
    }
    for (const group of groups) {
      const team = byGroup.get(group);
      if (team) {
        if (!team.spec?.users?.includes(user)) await this.setMember(team, user, true);
      } else if (!disableCreation) {
        await this.createTeam(group, user);
      }
    }
  }

  private async createTeam(group: string, user: string): Promise<void> {
    const body: Team = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "Team",
      metadata: {
        name: objectNameFor(group, "group"),
        labels: { [SSO_TEAM_LABEL]: "true" },
        annotations: { [SSO_GROUP_ANNOTATION]: group },
      },
      spec: { displayName: group, users: [user] },
    };
    try {
      await this.options.store("teams").create(system(), undefined, body, { fieldManager: MANAGER });
    } catch (error) {
      if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
      // Another login created it meanwhile (or an admin's team has that name): join it if it is this group's.
      const existing = (await this.options.store("teams").get(system(), { name: body.metadata.name! })) as Team;
      if (existing.metadata.annotations?.[SSO_GROUP_ANNOTATION] === group) await this.setMember(existing, user, true);
    }
  }

  /** Adds or removes one user, retrying on a concurrent change of the team. */
  private async setMember(team: KubeObject, user: string, member: boolean): Promise<void> {
    const store = this.options.store("teams");
    let current = team as Team;
    for (let attempt = 0; attempt < 5; attempt++) {
      const users = current.spec?.users ?? [];
      const next = member ? [...new Set([...users, user])] : users.filter((u) => u !== user);
      if (next.length === users.length && users.includes(user) === member) return;
      try {
        await store.patch(
          system(),
          { name: current.metadata.name! },
          "merge",
          { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { users: next } },
          { fieldManager: MANAGER },
        );
        return;
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "Conflict")) throw error;
        current = (await store.get(system(), { name: current.metadata.name! })) as Team;
      }
    }
  }

  private async issueKey(
    user: UserEntry,
    connector: { id: string; displayName: string },
    identity: SsoIdentity,
    groups: string[],
  ): Promise<{ accessKey: string; keyName: string }> {
    const recorded: AccessKeyIdentity = {
      userId: identity.userId,
      username: identity.username,
      ...(identity.preferredUsername ? { preferredUsername: identity.preferredUsername } : {}),
      ...(identity.email ? { email: identity.email } : {}),
      ...(identity.emailVerified !== undefined ? { emailVerified: identity.emailVerified } : {}),
      ...(identity.extraClaims ? { extraClaims: identity.extraClaims } : {}),
      groups,
      connector: connector.id,
    };
    const created = await this.options.store("ownedaccesskeys").create(
      system(),
      undefined,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "OwnedAccessKey",
        metadata: { generateName: "login-" },
        spec: { type: "Login", user: user.name, displayName: `${connector.displayName} login`, identity: recorded },
      },
      { fieldManager: MANAGER },
    );
    return { accessKey: (created.spec as { key: string }).key, keyName: created.metadata.name ?? "" };
  }
}
