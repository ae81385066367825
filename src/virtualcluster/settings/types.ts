import type { AuditConfig } from "../../config/types.ts";
import type { Patch } from "../patches/types.ts";

/** A synced resource with patches. */
export interface PatchedResourceSettings {
  enabled: boolean;
  patches: Patch[];
}

/** ConfigMaps and Secrets: synced when referenced, or all of them. */
export interface ReferencedResourceSettings extends PatchedResourceSettings {
  all: boolean;
}

export interface PlatformApiKeySettings {
  /** Secret holding the access key (default `virtualcluster-platform-api-key`). */
  secretName: string;
  /** Namespace of the Secret; absent means the virtual cluster's own namespace. */
  namespace?: string;
  /** Create the Role and RoleBinding that allow reading the Secret (default true). */
  createRBAC: boolean;
}

export interface PlatformSettings {
  /** Absent: dedicated access keys (no shared Secret). */
  apiKey?: PlatformApiKeySettings;
  project?: string;
}

/** OpenID Connect authentication of the virtual cluster's API server (kube-apiserver's --oidc-* flags). */
export interface OidcAuthenticationSettings {
  /** The issuer, https only, e.g. the platform's https://<platformHost>/oidc. */
  issuerURL: string;
  /** The audience ID tokens must name. */
  clientID: string;
  /** Claim holding the user name (default "sub"). */
  usernameClaim: string;
  /** Prefix of user names; unset: "<issuerURL>#" unless the claim is "email"; "-": none. */
  usernamePrefix?: string;
  /** Claim holding the groups (a string or a list of strings); unset: no groups. */
  groupsClaim?: string;
  groupsPrefix?: string;
  /** PEM file of the CA that signed the issuer's serving certificate (default: the system's CAs). */
  caFile?: string;
}

/** virtualcluster.yaml, the parts implemented so far, with defaults applied. */
export interface VirtualClusterSettings {
  sync: {
    toHost: {
      endpoints: PatchedResourceSettings;
      services: PatchedResourceSettings;
      /** EndpointSlices written in the virtual cluster (not the ones mirrored from Endpoints). */
      endpointSlices: PatchedResourceSettings;
      configMaps: ReferencedResourceSettings;
      secrets: ReferencedResourceSettings;
      /** Multi-namespace mode: each virtual namespace gets its own host namespace, names are kept. */
      namespaces: { enabled: boolean };
    };
  };
  controlPlane: {
    apiServer: { oidc?: OidcAuthenticationSettings };
  };
  external: {
    /** Absent: no platform connection. `{}`: dedicated access keys. */
    platform?: PlatformSettings;
  };
  experimental: {
    multiNamespaceMode: { enabled: boolean };
  };
  /** The API server's audit log, as the platform's status.audit (path relative to the data directory). */
  audit?: AuditConfig;
}
