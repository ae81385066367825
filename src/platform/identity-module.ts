// The identity module: who a caller is and what it may do. The in-memory auth index (informer over storage), access
// keys, passwords and their login routes, signed tokens (the signing key ring, DirectClusterEndpointToken,
// SigningKeyRotation, the public JWKS and discovery routes), the authenticators and the authorizer the API server
// uses, the bootstrap admin, and the leader's login-key sweeper. The SSO and OpenID provider modules build on it
// (IdentityServices).

import type { Logger } from "pino";
import { isStatusError } from "../apimachinery/errors.ts";
import { GROUP, VERSION } from "../apis/management/v1/common.ts";
import type { OwnedAccessKey } from "../apis/management/v1/ownedaccesskey.ts";
import { LoginThrottle, type ThrottleOptions } from "../auth/login-throttle.ts";
import type { ScryptParams } from "../auth/password-hash.ts";
import type { SigningAlgorithm } from "../auth/signing/signing-key.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import type { LiveSettings } from "../config/settings.ts";
import { type ApiServerOptions, DEFAULT_PUBLIC_PATHS } from "../http/api-server.ts";
import { AccessKeyAuthenticator } from "../identity/access-key-authenticator.ts";
import { ActivityRecorder } from "../identity/activity-recorder.ts";
import { AuthIndex, type KeyEntry } from "../identity/auth-index.ts";
import { refuseEndpointTokens } from "../identity/endpoint-token-refusal.ts";
import { platformImpersonation } from "../identity/impersonated-caller.ts";
import { keyCaller } from "../identity/key-caller.ts";
import { KEY_NOT_FOUND, keyProblem } from "../identity/key-validity.ts";
import { LoginKeySweeper } from "../identity/login-key-sweeper.ts";
import { OwnAccessKeysView } from "../identity/owned-access-key-view.ts";
import { PasswordStore } from "../identity/password-store.ts";
import { PlatformAuthorizer } from "../identity/platform-authorizer.ts";
import { isPrivileged, principalOf, sameCaller } from "../identity/principal.ts";
import { type FactsLookup, factsLookup } from "../identity/resource-facts.ts";
import { SessionCookieAuthenticator } from "../identity/session-cookie.ts";
import { VisibleObjectsView } from "../identity/visible-objects-view.ts";
import type { Registry } from "../registry/registry.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import { formatTimestamp } from "../registry/time.ts";
import type { ResourceStore } from "../registry/types.ts";
import { sweepExpired } from "../storage/expiring-records.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { type BootstrapResult, bootstrapAdmin } from "./bootstrap.ts";
import { expiredStateSweeper } from "./expired-state-sweeper.ts";
import { type IdentityKeys, openIdentityKeys } from "./identity-keys.ts";
import { identityKinds } from "./identity-kinds.ts";
import { restampKeyGenerations } from "./key-generation-stamps.ts";
import { loginRoutes } from "./login-routes.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { ModuleContext, ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";
import { LOGIN_FAILURES_PREFIX } from "./shared-login-throttle.ts";
import { registrySubjects } from "./subject-directory.ts";
import { wellKnownRoutes } from "./well-known-routes.ts";

const MANAGER = "virtualcluster-platform";
const system = () => systemContext("system:platform-auth", MANAGER);

export interface IdentityModuleOptions {
  storage: KeyValueStore;
  settings: LiveSettings;
  /** Filled with every module's kinds before any module starts; read when requests are served. */
  registry: Registry;
  dataDir: string;
  logger?: Logger;
  /** Cheaper scrypt for tests; the default costs about 0.1 s per hash. */
  scrypt?: ScryptParams;
  throttle?: ThrottleOptions;
  sweepIntervalMs?: number;
  /** How often the leader deletes expired SSO, OpenID and throttling state (default 5 minutes). */
  stateSweepIntervalMs?: number;
  /** Algorithm of the first signing key of a new data directory (default ES256). */
  signingAlgorithm?: SigningAlgorithm;
  /** Other replicas share the store (etcd): the signing key ring and login failure counts follow theirs. */
  sharedStore?: boolean;
  /** How often virtual clusters should report (selves tells them). */
  instanceHeartbeatSeconds?: number;
}

/** What the SSO and OpenID provider modules use of identity, once it has started. */
export interface IdentityServices {
  storage: KeyValueStore;
  settings: LiveSettings;
  index: AuthIndex;
  fresh(): Promise<void>;
  keys(): IdentityKeys;
  /** The iss of signed tokens: https://<platformHost, or the server's host:port>. */
  issuer(): string;
  store(plural: string): GenericStore;
  /** The stored key behind a plain access key. */
  keyOf(accessKey: string): Promise<KeyEntry | undefined>;
  deleteKey(name: string, uid: string): Promise<void>;
  /** An access key made by the platform itself. */
  createKey(generateName: string, spec: OwnedAccessKey["spec"]): Promise<OwnedAccessKey>;
}

export class IdentityModule implements PlatformModule, IdentityServices {
  readonly name = "identity";
  readonly kinds: Pick<ManagementResourceParts, "auth" | "subjects">;
  readonly index = new AuthIndex();
  readonly passwords: PasswordStore;
  readonly storage: KeyValueStore;
  readonly settings: LiveSettings;
  readonly authorizer: PlatformAuthorizer;
  /** The admin key and password, on the first start of a data directory. */
  bootstrap: BootstrapResult = {};
  private readonly options: IdentityModuleOptions;
  private readonly informer: StoreInformer;
  private readonly throttle: LoginThrottle;
  private readonly activity: ActivityRecorder;
  private readonly authenticator: AccessKeyAuthenticator;
  private readonly sweeper: LoginKeySweeper;
  private readonly unsubscribe: () => void;
  private readonly facts: FactsLookup;
  private opened?: IdentityKeys;
  private serverHost = "";

  constructor(options: IdentityModuleOptions) {
    this.options = options;
    const { storage, settings, registry, logger } = options;
    this.storage = storage;
    this.settings = settings;
    this.informer = new StoreInformer(storage, this.index, (error) =>
      logger?.error({ err: String(error) }, "auth index update failed"),
    );
    this.passwords = new PasswordStore(storage, options.scrypt);
    this.throttle = new LoginThrottle(options.throttle);
    this.activity = this.activityRecorder();
    this.authenticator = new AccessKeyAuthenticator({
      index: this.index,
      fresh: this.fresh,
      limits: () => settings.current().auth,
      activity: this.activity,
    });
    // The authorization facts of whatever the registry serves.
    this.facts = factsLookup((group, resource) => registry.store(group, resource)?.definition);
    this.authorizer = new PlatformAuthorizer({
      index: this.index,
      projectNamespacePrefix: () => settings.current().projectNamespacePrefix,
      facts: this.facts,
      definitions: () => registry.stores().map((store) => store.definition),
    });
    this.sweeper = new LoginKeySweeper({
      index: this.index,
      loginTTLSeconds: () => settings.current().auth.loginAccessKeyTTLSeconds,
      remove: (key: KeyEntry) => this.deleteKey(key.name, key.uid),
      intervalMs: options.sweepIntervalMs,
      onError: (error, key) => logger?.warn({ key, err: String(error) }, "deleting an expired login key failed"),
    });
    this.unsubscribe = this.forgetDeleted();
    this.kinds = {
      auth: identityKinds({
        identity: this,
        authenticator: this.authenticator,
        throttle: this.throttle,
        serverHost: () => this.serverHost,
        instanceHeartbeatSeconds: options.instanceHeartbeatSeconds,
      }),
      subjects: registrySubjects(() => registry),
    };
  }

  async start({ registry }: ModuleContext): Promise<void> {
    const { storage, logger } = this.options;
    await this.informer.start();
    this.opened = await openIdentityKeys({
      storage,
      index: this.index,
      fresh: this.fresh,
      settings: this.settings,
      facts: this.facts,
      issuer: () => this.issuer(),
      signingAlgorithm: this.options.signingAlgorithm,
      sharedStore: this.options.sharedStore,
      throttle: this.throttle,
      logger,
    });
    this.index.decodeWith((record) => registry.decodeShared(record));
    // Stores of earlier versions: their keys' stamps as session generations would have made them (once).
    await restampKeyGenerations(storage, logger);
    this.bootstrap = await bootstrapAdmin(registry, this.options.dataDir, this.passwords, {
      shared: Boolean(this.options.sharedStore),
    });
  }

  readonly fresh = (): Promise<void> => this.informer.fresh();

  keys(): IdentityKeys {
    if (!this.opened) throw new Error("the identity module is not started");
    return this.opened;
  }

  issuer(): string {
    const host = (this.settings.current().platformHost || this.serverHost)
      .replace(/^https?:\/\//, "")
      .replace(/\/+$/, "");
    return `https://${host}`;
  }

  /** Where clients reach the platform (selves reports it when the settings leave platformHost empty). */
  setServerHost(host: string): void {
    this.serverHost = host;
  }

  store(plural: string): GenericStore {
    const found = this.options.registry.genericStore(GROUP, plural);
    if (!found) throw new Error(`${plural} is not registered`);
    return found;
  }

  async keyOf(accessKey: string): Promise<KeyEntry | undefined> {
    const user = await this.authenticator.authenticateToken(accessKey, { touch: false });
    return principalOf(user)?.key;
  }

  async deleteKey(name: string, uid: string): Promise<void> {
    try {
      await this.store("ownedaccesskeys").delete(system(), { name }, { preconditions: { uid } });
    } catch (error) {
      if (!(isStatusError(error) && (error.reason === "NotFound" || error.reason === "Conflict"))) throw error;
    }
  }

  async createKey(generateName: string, spec: OwnedAccessKey["spec"]): Promise<OwnedAccessKey> {
    const object = { apiVersion: `${GROUP}/${VERSION}`, kind: "OwnedAccessKey", metadata: { generateName }, spec };
    return (await this.store("ownedaccesskeys").create(system(), undefined, object, {
      fieldManager: MANAGER,
    })) as OwnedAccessKey;
  }

  /** Why the stored key `name` (with this uid) would not authenticate now; undefined when it would. */
  keyProblem(name: string, uid: string): string | undefined {
    const key = this.index.keyByName(name);
    if (!key || key.uid !== uid) return KEY_NOT_FOUND;
    return keyProblem(key, this.index, Date.now(), this.settings.current().auth);
  }

  /** The stores to serve: ownedaccesskeys through the caller-filtered view, projects and instances by visibility. */
  servedStores(registry: Registry): ResourceStore[] {
    return registry.stores().map((s) => {
      if (s.definition.group !== GROUP) return s;
      if (s.definition.plural === "ownedaccesskeys") return new OwnAccessKeysView(s, keyCaller);
      if (s.definition.plural === "projects" || s.definition.plural === "virtualclusterinstances") {
        return new VisibleObjectsView(s, this.authorizer.visibility(s.definition.plural));
      }
      return s;
    });
  }

  /** Who a caller is and what it may do, for the API server. */
  serverOptions(): Pick<
    ApiServerOptions,
    "authenticators" | "authorizer" | "impersonation" | "privileged" | "callerChanges"
  > {
    const authenticator = this.authenticator;
    return {
      // Endpoint tokens are reviewed through selves (identity-kinds.ts), never accepted as the caller here.
      authenticators: [
        refuseEndpointTokens(this.keys().tokens),
        authenticator,
        // The console's session cookie, taken only with the console header (src/identity/session-cookie.ts).
        new SessionCookieAuthenticator({
          authenticateKey: (key, connection) => authenticator.authenticateToken(key, { connection }),
        }),
      ],
      authorizer: this.authorizer,
      // kubectl --as: admins act as a platform user, still bounded by their key's scope.
      impersonation: platformImpersonation({ index: this.index, fresh: this.fresh }),
      // Exempt from flow control, and let in on the connection reserve: unscoped admin keys.
      privileged: isPrivileged,
      // An open watch ends once its key is revoked or its caller's teams, roles or scope change.
      callerChanges: { subscribe: (listener) => this.index.onCallerChange(listener), same: sameCaller },
    };
  }

  routes(): ModuleRoutes {
    const { index, fresh, passwords, throttle, settings } = this;
    const issueLoginKey = async (entry: { name: string }) => {
      const created = await this.createKey("login-", {
        type: "Login",
        user: entry.name,
        displayName: "Password login",
      });
      return (created.spec as { key: string }).key;
    };
    const keys = this.keys();
    return {
      // Login, callbacks and logout: logout authenticates the key (bearer or session cookie) it deletes itself.
      publicPaths: [...DEFAULT_PUBLIC_PATHS, "/auth/*"],
      plugins: [
        loginRoutes({ index, fresh, passwords, throttle, settings, issueLoginKey }),
        wellKnownRoutes({ jwks: () => keys.signingKeys.jwks(), issuer: () => this.issuer() }),
      ],
    };
  }

  tasks(): TaskMaker[] {
    const { storage, stateSweepIntervalMs, logger } = this.options;
    return [
      () => ({ name: "login key sweeper", start: () => this.sweeper.start(), stop: () => this.sweeper.stop() }),
      () =>
        expiredStateSweeper({
          jobs: [{ name: "login failures", sweep: () => sweepExpired({ storage, prefix: LOGIN_FAILURES_PREFIX }) }],
          intervalMs: stateSweepIntervalMs,
          logger,
        }),
    ];
  }

  async close(): Promise<void> {
    this.sweeper.stop();
    this.opened?.close();
    this.opened = undefined;
    this.unsubscribe();
    this.informer.stop();
  }

  /** Writes an access key's lastActivity (batched by the recorder). */
  private activityRecorder(): ActivityRecorder {
    const { logger } = this.options;
    return new ActivityRecorder(
      async (key, at) => {
        await this.store("ownedaccesskeys").patch(
          system(),
          { name: key.name, subresource: "status" },
          "merge",
          { metadata: { uid: key.uid }, status: { lastActivity: formatTimestamp(at) } },
          { fieldManager: MANAGER },
        );
      },
      (error, key) => logger?.warn({ key, err: String(error) }, "recording access key activity failed"),
    );
  }

  /** A deleted key's activity is forgotten, a deleted user's password removed. */
  private forgetDeleted(): () => void {
    const { logger } = this.options;
    return this.index.onChange((event) => {
      if (event.type !== "delete") return;
      const { key, value } = event.record;
      const { metadata } = JSON.parse(value) as OwnedAccessKey;
      if (key.startsWith(`/${GROUP}/ownedaccesskeys/`)) this.activity.forget(metadata.name ?? "");
      if (key.startsWith(`/${GROUP}/users/`)) {
        this.passwords.remove({ name: metadata.name ?? "", uid: metadata.uid ?? "" }).catch((error) => {
          logger?.warn({ user: metadata.name, err: String(error) }, "removing a deleted user's password failed");
        });
      }
    });
  }
}
