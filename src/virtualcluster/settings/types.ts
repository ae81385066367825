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

/** virtualcluster.yaml, the parts implemented so far, with defaults applied. */
export interface VirtualClusterSettings {
  sync: {
    toHost: {
      endpoints: PatchedResourceSettings;
      services: { enabled: boolean };
      configMaps: ReferencedResourceSettings;
      secrets: ReferencedResourceSettings;
      /** Multi-namespace mode: each virtual namespace gets its own host namespace, names are kept. */
      namespaces: { enabled: boolean };
    };
  };
  external: {
    /** Absent: no platform connection. `{}`: dedicated access keys. */
    platform?: PlatformSettings;
  };
  experimental: {
    multiNamespaceMode: { enabled: boolean };
  };
}
