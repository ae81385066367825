// The kinds the identity module serves and adds to others: the accesskeys and password subresources of users and
// teams, OwnedAccessKey, Self, DirectClusterEndpointToken and SigningKeyRotation. Made before any module starts;
// what they need of the started module (the signing keys) they read when a request comes.

import { isStatusError } from "../apimachinery/errors.ts";
import { accessKeysSubresource } from "../apis/management/v1/accesskeys-subresource.ts";
import { createDirectClusterEndpointTokenDefinition } from "../apis/management/v1/directclusterendpointtoken.ts";
import { createOwnedAccessKeyDefinition } from "../apis/management/v1/ownedaccesskey.ts";
import { createSelfDefinition } from "../apis/management/v1/self.ts";
import { createSigningKeyRotationDefinition } from "../apis/management/v1/signingkeyrotation.ts";
import type { User } from "../apis/management/v1/user.ts";
import { SESSION_GENERATION_ANNOTATION, sessionGeneration } from "../apis/management/v1/user-generations.ts";
import { passwordSubresource } from "../apis/management/v1/user-password.ts";
import { digestAccessKey, generateAccessKey } from "../auth/access-key-material.ts";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import type { AccessKeyAuthenticator } from "../identity/access-key-authenticator.ts";
import { describeCaller } from "../identity/describe-caller.ts";
import { keyCaller, keyOwners } from "../identity/key-caller.ts";
import { passwordService } from "../identity/password-service.ts";
import type { PasswordStore, UserRef } from "../identity/password-store.ts";
import { instancesRunBy } from "../identity/runtime-binding.ts";
import { systemContext } from "../registry/system-context.ts";
import type { ActionHandler, ResourceDefinition } from "../registry/types.ts";
import type { IdentityServices } from "./identity-module.ts";

const MANAGER = "virtualcluster-platform";
const system = () => systemContext("system:platform-auth", MANAGER);

/** The identity module's parts of the resource list (src/platform/management-resources.ts). */
export interface AuthDefinitions {
  /** Subresources the identity module serves on users and teams: accesskeys, password. */
  subresources: { users: Record<string, ActionHandler>; teams: Record<string, ActionHandler> };
  ownedAccessKeys: ResourceDefinition;
  self: ResourceDefinition;
  directClusterEndpointTokens: ResourceDefinition;
  signingKeyRotations: ResourceDefinition;
}

export interface IdentityKindsOptions {
  identity: IdentityServices & { passwords: PasswordStore };
  authenticator: AccessKeyAuthenticator;
  throttle: LoginThrottle;
  /** Where clients reach the platform, once it listens. */
  serverHost(): string;
  instanceHeartbeatSeconds?: number;
}

export function identityKinds(options: IdentityKindsOptions): AuthDefinitions {
  const { identity, authenticator } = options;
  const { index, fresh, settings, passwords } = identity;
  const keysStore = () => identity.store("ownedaccesskeys");
  const endSessions = (user: UserRef) => raiseSessionGeneration(identity, user);
  return {
    subresources: {
      users: {
        accesskeys: accessKeysSubresource("user", keysStore),
        password: passwordSubresource(passwordService({ passwords, throttle: options.throttle, endSessions })),
      },
      teams: { accesskeys: accessKeysSubresource("team", keysStore) },
    },
    ownedAccessKeys: createOwnedAccessKeyDefinition({
      owners: keyOwners(index, fresh),
      caller: keyCaller,
      material: { generate: generateAccessKey, digest: digestAccessKey },
      limits: () => settings.current().auth,
    }),
    self: createSelfDefinition(
      describeCaller({
        authenticate: (credential) => {
          const { tokens } = identity.keys();
          return tokens.recognizes(credential)
            ? tokens.authenticateToken(credential)
            : authenticator.authenticateToken(credential, { touch: false });
        },
        settings: () => {
          const current = settings.current();
          return {
            platformHost: current.platformHost || options.serverHost(),
            projectNamespacePrefix: current.projectNamespacePrefix,
            instanceHeartbeatSeconds: options.instanceHeartbeatSeconds,
          };
        },
        limits: () => settings.current().auth,
        instancesRunBy: (owner) => instancesRunBy(index, owner),
      }),
    ),
    directClusterEndpointTokens: createDirectClusterEndpointTokenDefinition({
      issue: (request) => identity.keys().tokenIssuer.issue(request),
      maxTTLSeconds: () => settings.current().auth.accessKeyMaxTTLSeconds,
    }),
    signingKeyRotations: createSigningKeyRotationDefinition({
      rotate: (algorithm) => identity.keys().signingKeys.rotate(algorithm),
      isAdmin: (context) => keyCaller.managesAll(context),
    }),
  };
}

/** Raises the user's session generation (src/apis/management/v1/user-generations.ts): its sessions end. */
async function raiseSessionGeneration(identity: IdentityServices, user: UserRef): Promise<void> {
  const users = identity.store("users");
  for (;;) {
    const current = (await users.get(system(), { name: user.name })) as User;
    try {
      await users.patch(
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
}
