// Test support for the auth layer: a registry over in-memory SQLite with users, teams and access keys, the auth
// index following it, an authenticator and an authorizer, and helpers to create objects as the platform.

import { GROUP, VERSION } from "../apis/management/v1/common.ts";
import { createDirectClusterEndpointTokenDefinition } from "../apis/management/v1/directclusterendpointtoken.ts";
import { createOwnedAccessKeyDefinition } from "../apis/management/v1/ownedaccesskey.ts";
import { teamDefinition } from "../apis/management/v1/team.ts";
import { userDefinition } from "../apis/management/v1/user.ts";
import { VIRTUAL_CLUSTER_INSTANCE_AUTHORIZATION } from "../apis/management/v1/virtualclusterinstance.ts";
import { digestAccessKey, generateAccessKey } from "../auth/access-key-material.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import { defaultSettings, LiveSettings } from "../config/settings.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import { openTestRegistry, type TestRegistry } from "../registry/testing.ts";
import type { RequestContext, ResourceDefinition, UserInfo } from "../registry/types.ts";
import { AccessKeyAuthenticator } from "./access-key-authenticator.ts";
import { ActivityRecorder } from "./activity-recorder.ts";
import { AuthIndex } from "./auth-index.ts";
import { keyCaller, keyOwners } from "./key-caller.ts";
import { PlatformAuthorizer } from "./platform-authorizer.ts";
import { factsLookup } from "./resource-facts.ts";

export interface AuthFixture {
  env: TestRegistry;
  index: AuthIndex;
  informer: StoreInformer;
  settings: LiveSettings;
  authenticator: AccessKeyAuthenticator;
  authorizer: PlatformAuthorizer;
  activity: ActivityRecorder;
  users: GenericStore;
  teams: GenericStore;
  keys: GenericStore;
  /** The clock authentication uses (ms); tests move it. */
  clock: { now: number };
  /** Activity writes requested (key names). */
  activityWrites: string[];
  createUser(name: string, spec?: Record<string, unknown>): Promise<void>;
  createTeam(name: string, spec?: Record<string, unknown>): Promise<void>;
  /** Creates a key as the platform; resolves to its plain value. */
  createKey(name: string, spec: Record<string, unknown>): Promise<string>;
  /** A request context for the caller of `key`. */
  contextOf(key: string): Promise<RequestContext>;
  close(): Promise<void>;
}

export const platform = () => systemContext("system:test", "auth-test");

/** Virtual cluster instances as the authorizer sees them: namespaced, any spec, the real authorization facts. */
export const testInstancesDefinition: ResourceDefinition = {
  group: GROUP,
  version: VERSION,
  kind: "VirtualClusterInstance",
  plural: "virtualclusterinstances",
  singular: "virtualclusterinstance",
  namespaced: true,
  description: "test",
  schema: { spec: { type: "object", description: "spec", "x-kubernetes-preserve-unknown-fields": true } },
  strategy: {},
  authorization: VIRTUAL_CLUSTER_INSTANCE_AUTHORIZATION,
};

export async function openAuthFixture(extra: ResourceDefinition[] = []): Promise<AuthFixture> {
  const index = new AuthIndex();
  const settings = new LiveSettings(defaultSettings());
  const clock = { now: Date.now() };
  let informer: StoreInformer | undefined;
  const fresh = () => informer!.fresh();
  const keysDefinition = createOwnedAccessKeyDefinition({
    owners: keyOwners(index, fresh),
    caller: keyCaller,
    material: { generate: generateAccessKey, digest: digestAccessKey },
    limits: () => settings.current().auth,
  });
  const tokens = createDirectClusterEndpointTokenDefinition({
    issue: () => Promise.reject(new Error("this fixture issues no tokens: use openTokenFixture()")),
    maxTTLSeconds: () => 0,
  });
  const env = await openTestRegistry([userDefinition, teamDefinition, keysDefinition, tokens, ...extra]);
  // As the platform wires it: watched records are read through the registry's shared decode.
  index.decodeWith((record) => env.registry.decodeShared(record));
  informer = new StoreInformer(env.registry.storage, index);
  await informer.start();
  const activityWrites: string[] = [];
  const activity = new ActivityRecorder(async (key) => {
    activityWrites.push(key.name);
  });
  const authenticator = new AccessKeyAuthenticator({
    index,
    fresh,
    limits: () => settings.current().auth,
    activity,
    now: () => clock.now,
  });
  const authorizer = new PlatformAuthorizer({
    index,
    projectNamespacePrefix: () => settings.current().projectNamespacePrefix,
    facts: factsLookup((group, resource) => env.registry.store(group, resource)?.definition),
    definitions: () => env.registry.stores().map((store) => store.definition),
  });
  const store = (definition: ResourceDefinition) => env.store(definition);
  const users = store(userDefinition);
  const teams = store(teamDefinition);
  const keys = store(keysDefinition);
  const object = (kind: string, name: string, spec: Record<string, unknown>) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind,
    metadata: { name },
    spec,
  });
  return {
    env,
    index,
    informer,
    settings,
    authenticator,
    authorizer,
    activity,
    users,
    teams,
    keys,
    clock,
    activityWrites,
    async createUser(name, spec = {}) {
      await users.create(platform(), undefined, object("User", name, spec), {});
    },
    async createTeam(name, spec = {}) {
      await teams.create(platform(), undefined, object("Team", name, spec), {});
    },
    async createKey(name, spec) {
      const named = { displayName: name, ...spec };
      const created = await keys.create(platform(), undefined, object("OwnedAccessKey", name, named), {});
      return (created.spec as { key: string }).key;
    },
    async contextOf(key) {
      const user: UserInfo = await authenticator.authenticateToken(key, { touch: false });
      return { user, authorizer, warnings: [], userAgent: "auth-test", now: new Date(clock.now) };
    },
    async close() {
      informer?.stop();
      await env.close();
    },
  };
}
