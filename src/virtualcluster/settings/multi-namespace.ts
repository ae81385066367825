import type { VirtualClusterSettings } from "./types.ts";

/**
 * Multi-namespace mode: `sync.toHost.namespaces.enabled` (the current shape) or the older
 * `experimental.multiNamespaceMode.enabled`. Each virtual namespace then maps to its own host namespace.
 */
export function isMultiNamespace(settings: VirtualClusterSettings): boolean {
  return settings.sync.toHost.namespaces.enabled || settings.experimental.multiNamespaceMode.enabled;
}
