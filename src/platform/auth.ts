// Authentication and authorization of the platform, wired together: the in-memory auth index (informer over storage),
// the access-key resources (OwnedAccessKey, Team, Self, SelfSubjectAccessReview, the User subresources), the access
// key authenticator, the authorizer, password login routes, the lastActivity recorder and the Login key sweeper;
// and signed tokens: the signing key ring, DirectClusterEndpointToken and SigningKeyRotation, token review through
// selves, the refusal of endpoint tokens as bearer tokens (401, before the access key authenticator) and the public
// JWKS and OpenID discovery routes; and the platform as an OpenID provider for other tools (oidc.ts, under /oidc);
// and the sweep of the short-lived state all of these keep in the store (expired-state-sweeper.ts, run by the leader).

import type { Logger } from "pino";
import { isStatusError } from "../apimachinery/errors.ts";
import { accessKeysSubresource } from "../apis/management/v1/accesskeys-subresource.ts";
import { GROUP, VERSION } from "../apis/management/v1/common.ts";
import {
  createDirectClusterEndpointTokenDefinition,
  MAX_TOKEN_TTL_SECONDS,
} from "../apis/management/v1/directclusterendpointtoken.ts";
import { createOwnedAccessKeyDefinition, type OwnedAccessKey } from "../apis/management/v1/ownedaccesskey.ts";
import { createSelfDefinition } from "../apis/management/v1/self.ts";
import { createSigningKeyRotationDefinition } from "../apis/management/v1/signingkeyrotation.ts";
import type { User } from "../apis/management/v1/user.ts";
import { SESSION_GENERATION_ANNOTATION, sessionGeneration } from "../apis/management/v1/user-generations.ts";
import { passwordSubresource } from "../apis/management/v1/user-password.ts";
import { digestAccessKey, generateAccessKey } from "../auth/access-key-material.ts";
import { LoginThrottle, type ThrottleOptions } from "../auth/login-throttle.ts";
import type { ScryptParams } from "../auth/password-hash.ts";
import { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { SigningAlgorithm } from "../auth/signing/signing-key.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import type { LiveSettings } from "../config/settings.ts";
import { type ApiServerOptions, DEFAULT_PUBLIC_PATHS } from "../http/api-server.ts";
import { AccessKeyAuthenticator } from "../identity/access-key-authenticator.ts";
import { ActivityRecorder } from "../identity/activity-recorder.ts";
import { AuthIndex, type KeyEntry } from "../identity/auth-index.ts";
import { describeCaller } from "../identity/describe-caller.ts";
import { refuseEndpointTokens } from "../identity/endpoint-token-refusal.ts";
import { platformImpersonation } from "../identity/impersonated-caller.ts";
import { keyCaller, keyOwners } from "../identity/key-caller.ts";
import { KEY_NOT_FOUND, keyProblem } from "../identity/key-validity.ts";
import { LoginKeySweeper } from "../identity/login-key-sweeper.ts";
import { OIDC_MOUNT } from "../identity/oidc-provider/platform-oidc-provider.ts";
import { OwnAccessKeysView } from "../identity/owned-access-key-view.ts";
import { passwordService } from "../identity/password-service.ts";
import { PasswordStore, type UserRef } from "../identity/password-store.ts";
import { PlatformAuthorizer } from "../identity/platform-authorizer.ts";
import { isPrivileged, principalOf } from "../identity/principal.ts";
import { factsLookup } from "../identity/resource-facts.ts";
import { SessionCookieAuthenticator } from "../identity/session-cookie.ts";
import { SSO_STATE_PREFIX } from "../identity/sso/login-state.ts";
import { TokenAuthenticator } from "../identity/token-authenticator.ts";
import { TokenIssuer } from "../identity/token-issuer.ts";
import { VisibleObjectsView } from "../identity/visible-objects-view.ts";
import type { Registry } from "../registry/registry.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import { formatTimestamp } from "../registry/time.ts";
import type { ActionHandler, ResourceDefinition, ResourceStore } from "../registry/types.ts";
import { sweepExpired } from "../storage/expiring-records.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { loadCookieKeys } from "./cookie-keys.ts";
import { expiredStateSweeper } from "./expired-state-sweeper.ts";
import type { LeaderTask } from "./leader.ts";
import { loginRoutes } from "./login-routes.ts";
import { createPlatformOidc } from "./oidc.ts";
import { CLIENT_AUTH_FAILURES_PREFIX, LOGIN_FAILURES_PREFIX, shareLoginThrottle } from "./shared-login-throttle.ts";
import { platformSso } from "./sso.ts";
import { wellKnownRoutes } from "./well-known-routes.ts";

const MANAGER = "virtualcluster-platform";

export interface PlatformAuthOptions {
  storage: KeyValueStore;
  settings: LiveSettings;
  logger?: Logger;
  /** Cheaper scrypt for tests; the default costs about 0.1 s per hash. */
  scrypt?: ScryptParams;
  throttle?: ThrottleOptions;
  /** Failed client authentications at the OpenID provider, per client id ("username") and address. */
  clientThrottle?: ThrottleOptions;
  sweepIntervalMs?: number;
  /** How often the leader deletes expired SSO, OpenID and throttling state (default 5 minutes). */
  stateSweepIntervalMs?: number;
  /** Algorithm of the first signing key of a new data directory (default ES256). */
  signingAlgorithm?: SigningAlgorithm;
  /** Other replicas share the store (etcd): the signing key ring follows their rotations. */
  sharedStore?: boolean;
  /** How often virtual clusters should report (selves tells them). */
  instanceHeartbeatSeconds?: number;
}

/** The auth layer's parts of the resource list (src/platform/management-resources.ts). */
export interface AuthDefinitions {
  /** Subresources the auth layer serves on users and teams: accesskeys, password. */
  subresources: { users: Record<string, ActionHandler>; teams: Record<string, ActionHandler> };
  ownedAccessKeys: ResourceDefinition;
  self: ResourceDefinition;
  directClusterEndpointTokens: ResourceDefinition;
  signingKeyRotations: ResourceDefinition;
}

export interface PlatformAuth {
  definitions: AuthDefinitions;
  passwords: PasswordStore;
  /** Call once the definitions are registered. */
  attach(registry: Registry): void;
  /** The login-key sweeper, run by the leader replica only (src/platform/leader.ts). */
  sweeper: { start(): void; stop(): void };
  /** A new sweeper of expired short-lived state, for the leader replica (one per term). */
  stateSweeper(): LeaderTask;
  /** The stores to serve: ownedaccesskeys through the caller-filtered view. */
  stores(registry: Registry): ResourceStore[];
  serverOptions: Pick<
    ApiServerOptions,
    "authenticators" | "authorizer" | "impersonation" | "privileged" | "publicPaths" | "plugins"
  >;
  /** Where clients reach the platform (selves reports it when the settings leave platformHost empty). */
  setServerHost(host: string): void;
  /** The iss of signed tokens: https://<platformHost, or the server's host:port>. */
  issuer(): string;
  /** Why the stored key `name` (with this uid) would not authenticate now; undefined when it would. */
  keyProblem(name: string, uid: string): string | undefined;
  close(): void;
}

const system = () => systemContext("system:platform-auth", MANAGER);

export async function createPlatformAuth(options: PlatformAuthOptions): Promise<PlatformAuth> {
  const { storage, settings, logger } = options;
  const index = new AuthIndex();
  const informer = new StoreInformer(storage, index, (error) =>
    logger?.error({ err: String(error) }, "auth index update failed"),
  );
  await informer.start();
  const fresh = () => informer.fresh();
  let registry: Registry | undefined;
  let serverHost = "";
  const store = (plural: string): GenericStore => {
    const found = registry?.genericStore(GROUP, plural);
    if (!found) throw new Error(`${plural} is not registered`);
    return found;
  };

  const signingKeys = await SigningKeyRing.open({
    storage,
    maxTokenTTLSeconds: MAX_TOKEN_TTL_SECONDS,
    algorithm: options.signingAlgorithm,
    shared: options.sharedStore,
    onError: (error) => logger?.warn({ err: String(error) }, "pruning expired signing keys failed"),
  });
  const issuer = () => {
    const host = (settings.current().platformHost || serverHost).replace(/^https?:\/\//, "").replace(/\/+$/, "");
    return `https://${host}`;
  };

  const passwords = new PasswordStore(storage, options.scrypt);
  const throttle = new LoginThrottle(options.throttle);
  // Replicas share failure counts through the store, so spreading guesses over them gains nothing.
  const sharedThrottle = options.sharedStore ? await shareLoginThrottle({ storage, throttle, logger }) : undefined;
  // Wrong client secrets at the OpenID provider: a client id counts as a username does (10 tries from one address,
  // then waits; 100 from everywhere).
  const clientThrottle = new LoginThrottle(
    options.clientThrottle ?? { failuresPerPair: 10, failuresPerUsername: 100, failuresPerAddress: 20 },
  );
  const sharedClientThrottle = options.sharedStore
    ? await shareLoginThrottle({ storage, throttle: clientThrottle, prefix: CLIENT_AUTH_FAILURES_PREFIX, logger })
    : undefined;
  const activity = new ActivityRecorder(
    async (key, at) => {
      await store("ownedaccesskeys").patch(
        system(),
        { name: key.name, subresource: "status" },
        "merge",
        { metadata: { uid: key.uid }, status: { lastActivity: formatTimestamp(at) } },
        { fieldManager: MANAGER },
      );
    },
    (error, key) => logger?.warn({ key, err: String(error) }, "recording access key activity failed"),
  );
  const authenticator = new AccessKeyAuthenticator({
    index,
    fresh,
    limits: () => settings.current().auth,
    activity,
  });
  // The authorization facts of whatever the registry serves (known once attach() ran).
  const facts = factsLookup((group, resource) => registry?.store(group, resource)?.definition);
  const tokens = new TokenAuthenticator({
    ring: signingKeys,
    index,
    fresh,
    limits: () => settings.current().auth,
    facts,
  });
  const tokenIssuer = new TokenIssuer({
    ring: signingKeys,
    index,
    fresh,
    issuer,
    namespacePrefix: () => settings.current().projectNamespacePrefix,
  });
  const deleteKey = async (name: string, uid: string) => {
    try {
      await store("ownedaccesskeys").delete(system(), { name }, { preconditions: { uid } });
    } catch (error) {
      if (!(isStatusError(error) && (error.reason === "NotFound" || error.reason === "Conflict"))) throw error;
    }
  };
  const sweeper = new LoginKeySweeper({
    index,
    loginTTLSeconds: () => settings.current().auth.loginAccessKeyTTLSeconds,
    remove: (key: KeyEntry) => deleteKey(key.name, key.uid),
    intervalMs: options.sweepIntervalMs,
    onError: (error, key) => logger?.warn({ key, err: String(error) }, "deleting an expired login key failed"),
  });
  const unsubscribe = index.onChange((event) => {
    if (event.type !== "delete") return;
    const { key, value } = event.record;
    const { metadata } = JSON.parse(value) as OwnedAccessKey;
    if (key.startsWith(`/${GROUP}/ownedaccesskeys/`)) activity.forget(metadata.name ?? "");
    if (key.startsWith(`/${GROUP}/users/`)) {
      passwords.remove({ name: metadata.name ?? "", uid: metadata.uid ?? "" }).catch((error) => {
        logger?.warn({ user: metadata.name, err: String(error) }, "removing a deleted user's password failed");
      });
    }
  });

  /** Raises the user's session generation (src/apis/management/v1/user-generations.ts): its sessions end. */
  const endSessions = async (user: UserRef) => {
    for (;;) {
      const current = (await store("users").get(system(), { name: user.name })) as User;
      try {
        await store("users").patch(
          system(),
          { name: user.name },
          "merge",
          {
            metadata: {
              uid: user.uid,
              resourceVersion: current.metadata.resourceVersion,
              annotations: { [SESSION_GENERATION_ANNOTATION]: String(sessionGeneration(current) + 1) },
            },
          },
          { fieldManager: MANAGER },
        );
        return;
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "Conflict")) throw error;
      }
    }
  };

  const keyOf = async (accessKey: string) => {
    const user = await authenticator.authenticateToken(accessKey, { touch: false });
    return principalOf(user)?.key;
  };
  const keysStore = () => store("ownedaccesskeys");
  /** An access key made by the platform itself. */
  const createKey = (generateName: string, spec: OwnedAccessKey["spec"]) =>
    keysStore().create(
      system(),
      undefined,
      { apiVersion: `${GROUP}/${VERSION}`, kind: "OwnedAccessKey", metadata: { generateName }, spec },
      { fieldManager: MANAGER },
    );
  const cookieKeys = await loadCookieKeys(storage);
  const oidc = await createPlatformOidc({
    storage,
    index,
    fresh,
    settings,
    signingKeys,
    baseUrl: issuer,
    keyOf,
    deleteKey,
    async createKey(spec) {
      const created = await createKey("oidc-refresh-", spec);
      return { name: created.metadata.name ?? "", uid: created.metadata.uid ?? "" };
    },
    clientThrottle,
    cookieKeys,
    logger,
  });

  const keysDefinition = createOwnedAccessKeyDefinition({
    owners: keyOwners(index, fresh),
    caller: keyCaller,
    material: { generate: generateAccessKey, digest: digestAccessKey },
    limits: () => settings.current().auth,
  });
  const self = createSelfDefinition(
    describeCaller({
      authenticate: (credential) =>
        tokens.recognizes(credential)
          ? tokens.authenticateToken(credential)
          : authenticator.authenticateToken(credential, { touch: false }),
      settings: () => {
        const current = settings.current();
        return {
          platformHost: current.platformHost || serverHost,
          projectNamespacePrefix: current.projectNamespacePrefix,
          instanceHeartbeatSeconds: options.instanceHeartbeatSeconds,
        };
      },
      limits: () => settings.current().auth,
    }),
  );

  const authorizer = new PlatformAuthorizer({
    index,
    projectNamespacePrefix: () => settings.current().projectNamespacePrefix,
    facts,
    definitions: () => registry?.stores().map((store) => store.definition) ?? [],
  });

  const issueLoginKey = async (entry: { name: string }) => {
    const created = await createKey("login-", { type: "Login", user: entry.name, displayName: "Password login" });
    return (created.spec as { key: string }).key;
  };

  return {
    definitions: {
      subresources: {
        users: {
          accesskeys: accessKeysSubresource("user", keysStore),
          password: passwordSubresource(passwordService({ passwords, throttle, endSessions })),
        },
        teams: { accesskeys: accessKeysSubresource("team", keysStore) },
      },
      ownedAccessKeys: keysDefinition,
      self,
      directClusterEndpointTokens: createDirectClusterEndpointTokenDefinition({
        issue: (request) => tokenIssuer.issue(request),
        maxTTLSeconds: () => settings.current().auth.accessKeyMaxTTLSeconds,
      }),
      signingKeyRotations: createSigningKeyRotationDefinition({
        rotate: (algorithm) => signingKeys.rotate(algorithm),
        isAdmin: (context) => keyCaller.managesAll(context),
      }),
    },
    passwords,
    attach(target) {
      registry = target;
      index.decodeWith((record) => target.decodeShared(record));
    },
    sweeper,
    stateSweeper: () =>
      expiredStateSweeper({
        jobs: [
          { name: "OpenID provider", sweep: () => oidc.sweep() },
          { name: "single sign-on", sweep: () => sweepExpired({ storage, prefix: SSO_STATE_PREFIX }) },
          { name: "login failures", sweep: () => sweepExpired({ storage, prefix: LOGIN_FAILURES_PREFIX }) },
          { name: "client failures", sweep: () => sweepExpired({ storage, prefix: CLIENT_AUTH_FAILURES_PREFIX }) },
        ],
        intervalMs: options.stateSweepIntervalMs,
        logger,
      }),
    stores(target) {
      return target.stores().map((s) => {
        if (s.definition.group !== GROUP) return s;
        if (s.definition.plural === "ownedaccesskeys") return new OwnAccessKeysView(s, keyCaller);
        if (s.definition.plural === "projects" || s.definition.plural === "virtualclusterinstances") {
          return new VisibleObjectsView(s, authorizer.visibility(s.definition.plural));
        }
        return s;
      });
    },
    serverOptions: {
      // Endpoint tokens are reviewed through selves (describeCaller above), never accepted as the caller here.
      authenticators: [
        refuseEndpointTokens(tokens),
        authenticator,
        // The console's session cookie, taken only with the console header (src/identity/session-cookie.ts).
        new SessionCookieAuthenticator({
          authenticateKey: (key, connection) => authenticator.authenticateToken(key, { connection }),
        }),
      ],
      authorizer,
      // kubectl --as: admins act as a platform user, still bounded by their key's scope.
      impersonation: platformImpersonation({ index, fresh }),
      // Exempt from flow control, and let in on the connection reserve: unscoped admin keys.
      privileged: isPrivileged,
      // Login, callbacks and logout: logout authenticates the key (bearer or session cookie) it deletes itself.
      publicPaths: [...DEFAULT_PUBLIC_PATHS, "/auth/*", OIDC_MOUNT],
      plugins: [
        loginRoutes({ index, fresh, passwords, throttle, settings, issueLoginKey }),
        platformSso({
          storage,
          index,
          fresh,
          settings,
          store,
          deleteKey,
          baseUrl: issuer,
          cookieKeys,
          logger,
          keyOf,
        }),
        wellKnownRoutes({ jwks: () => signingKeys.jwks(), issuer }),
        oidc.plugin,
      ],
    },
    setServerHost(host) {
      serverHost = host;
    },
    issuer,
    keyProblem(name, uid) {
      const key = index.keyByName(name);
      if (!key || key.uid !== uid) return KEY_NOT_FOUND;
      return keyProblem(key, index, Date.now(), settings.current().auth);
    },
    close() {
      sweeper.stop();
      signingKeys.close();
      sharedThrottle?.close();
      sharedClientThrottle?.close();
      unsubscribe();
      informer.stop();
    },
  };
}
