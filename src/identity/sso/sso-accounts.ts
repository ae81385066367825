// What a single sign-on login does with the identity a connector returns, the same for every connector:
//   1. the User: the one linked to the external identity, whose spec.subject is sso:<connector>:<provider user id>
//      (sso-subject.ts), and no other: usernames, e-mail and display names are profile data, never keys. Without a
//      link a new user is created under a name no user has (new-user-names.ts), unless disableUserCreation; a
//      disabled user is refused. The e-mail a provider states verified is recorded (spec.verifiedEmail);
//   2. spec.ssoGroups: the provider's groups that match a groupsFilters expression (all when there are none);
//   3. teams: one team per group (created unless disableTeamCreation), labelled as SSO teams with the group in an
//      annotation; the user's membership (spec.users) of every SSO team follows its groups on every login;
//   4. a Login OwnedAccessKey whose spec.identity records the connector and the person, never a provider token.

import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import type { AccessKeyIdentity } from "../../apis/management/v1/ownedaccesskey-schema.ts";
import { ssoSubject } from "../../apis/management/v1/sso-subject.ts";
import type { Team } from "../../apis/management/v1/team.ts";
import type { User } from "../../apis/management/v1/user.ts";
import { compileGoRegexp } from "../../config/formats.ts";
import type { SsoSettings } from "../../config/settings.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { type AuthIndex, sameAddress, type UserEntry } from "../auth-index.ts";
import { freeUserNames, objectNameFor } from "./new-user-names.ts";
import { type SsoIdentity, SsoRefusal } from "./types.ts";

export const SSO_TEAM_LABEL = `${GROUP}/sso-team`;
export const SSO_GROUP_ANNOTATION = `${GROUP}/sso-group`;
export const SSO_MANAGER = "virtualcluster-platform-sso";
const MANAGER = SSO_MANAGER;

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
    const subject = ssoSubject(connector.id, identity.userId);
    await this.options.fresh();
    let user = this.linked(subject);
    let created = false;
    if (!user) {
      if (settings.disableUserCreation) {
        throw new SsoRefusal(
          "disableUserCreation",
          `no user on this platform is linked to your identity (${subject}), and single sign-on does not create users here (auth.disableUserCreation); ask an administrator to create your user or to link yours by setting its spec.subject to ${subject}`,
        );
      }
      user = await this.createUser(subject, identity, groups);
      created = true;
    }
    if (user.disabled) throw new SsoRefusal("disabled", `user ${user.username} is disabled`);
    if (!created) await this.refresh(user, identity, groups);
    await this.syncTeams(user.name, groups, settings.disableTeamCreation);
    const key = await this.issueKey(user, connector, identity, groups);
    return { user, created, ...key };
  }

  /** The user linked to this external identity; several (an administrator's mistake) is a refusal, not a guess. */
  private linked(subject: string): UserEntry | undefined {
    const found = [...this.options.index.allUsers()].filter((user) => user.subject === subject);
    if (found.length > 1) {
      throw new SsoRefusal(
        "subject",
        `several users are linked to your identity (${subject}); an administrator must keep the link on one of them`,
      );
    }
    return found[0];
  }

  private async createUser(subject: string, identity: SsoIdentity, groups: string[]): Promise<UserEntry> {
    const taken = new Set<string>();
    for (const user of this.options.index.allUsers()) {
      taken.add(user.name.toLowerCase());
      taken.add(user.username.toLowerCase());
    }
    for (const { name, username } of freeUserNames(identity.username, taken)) {
      const body: User = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "User",
        metadata: { name },
        spec: {
          username,
          subject,
          displayName: identity.displayName ?? identity.preferredUsername ?? identity.username,
          ...(identity.email ? { email: identity.email } : {}),
          ...(identity.email && identity.emailVerified ? { verifiedEmail: identity.email } : {}),
          ssoGroups: groups,
        },
      };
      try {
        await this.options.store("users").create(system(), undefined, body, { fieldManager: MANAGER });
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
        // A login of the same identity (a double click) made its user first: that one. Else the next candidate.
        await this.options.fresh();
        const meanwhile = this.linked(subject);
        if (meanwhile) return meanwhile;
        continue;
      }
      await this.options.fresh();
      const entry = this.options.index.user(name);
      if (entry) return entry;
    }
    throw new SsoRefusal(
      "username",
      `no free user name for ${identity.username}; ask an administrator to create your user`,
    );
  }

  /** A known user's groups, and its e-mail's verification when the provider now states it for the same address. */
  private async refresh(user: UserEntry, identity: SsoIdentity, groups: string[]): Promise<void> {
    const stored = (await this.options.store("users").get(system(), { name: user.name })) as User;
    const spec: Partial<User["spec"] & object> = {};
    if (JSON.stringify(stored.spec?.ssoGroups ?? []) !== JSON.stringify(groups)) spec.ssoGroups = groups;
    const verified = identity.emailVerified && sameAddress(identity.email, stored.spec?.email);
    if (verified && !sameAddress(stored.spec?.verifiedEmail, stored.spec?.email))
      spec.verifiedEmail = stored.spec?.email;
    if (Object.keys(spec).length === 0) return;
    await this.options
      .store("users")
      .patch(system(), { name: user.name }, "merge", { metadata: { uid: user.uid }, spec }, { fieldManager: MANAGER });
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
      ...(identity.email ? { emailVerified: identity.emailVerified } : {}),
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
