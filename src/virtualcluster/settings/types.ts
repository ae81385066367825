import type { AuditConfig } from "../../config/types.ts";
import type { Patch } from "../patches/types.ts";

/** A synced resource with patches. */
export interface PatchedResourceSettings {
  enabled: boolean;
  patches: Patch[];
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

/** virtualcluster.yaml, the parts implemented so far, with defaults applied. */
export interface VirtualClusterSettings {
  sync: {
    toHost: {
      endpoints: PatchedResourceSettings;
      services: { enabled: boolean };
      secrets: PatchedResourceSettings;
    };
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
