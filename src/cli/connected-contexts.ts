// The kube contexts `connect` added, kept in the client config (section connectedContexts) with the context that was
// current before, so `delete` can remove them again and switch back, as `vcluster disconnect` does.

import { readClientConfig, writeClientConfig } from "./client-config.ts";
import { readKubeconfigFile, removeKubeconfigContext, writeKubeconfigFile } from "./kubeconfig-merge.ts";

const SECTION = "connectedContexts";

export interface ConnectedContext {
  /** The kubeconfig file and the context `connect` wrote into it. */
  file: string;
  context: string;
  /** The current context before `connect` switched, if there was one. */
  previous?: string;
  /** The platform (as logged in) and the virtual cluster's instance there. */
  platform: string;
  instance: { namespace: string; name: string };
}

export interface RemovedContext {
  file: string;
  context: string;
  /** The context made current again, if the removed one was current. */
  switchedTo?: string;
}

const withoutScheme = (url: string) => url.replace(/^https?:\/\//, "").replace(/\/+$/, "");

function entries(config: Record<string, unknown>): ConnectedContext[] {
  const list = config[SECTION];
  return Array.isArray(list) ? (list as ConnectedContext[]) : [];
}

/** Remembers a context `connect` wrote; a reconnect keeps the context that was current before the first connect. */
export function rememberConnectedContext(entry: ConnectedContext): void {
  const config = readClientConfig();
  const list = entries(config);
  const earlier = list.find((item) => item.file === entry.file && item.context === entry.context);
  const previous = entry.previous === entry.context ? earlier?.previous : entry.previous;
  const rest = list.filter((item) => item !== earlier);
  writeClientConfig({ ...config, [SECTION]: [...rest, { ...entry, previous }] });
}

/**
 * Removes from their kubeconfig files the contexts `connect` added for the given platform instances (with their user
 * and cluster entries), switching back to the context that was current before where one was current, and forgets them.
 */
export function removeConnectedContexts(
  instances: { platform: string; namespace: string; name: string }[],
): RemovedContext[] {
  const config = readClientConfig();
  const list = entries(config);
  const matches = (item: ConnectedContext) =>
    instances.some(
      (instance) =>
        withoutScheme(instance.platform) === withoutScheme(item.platform) &&
        instance.namespace === item.instance.namespace &&
        instance.name === item.instance.name,
    );
  const removed: RemovedContext[] = [];
  for (const item of list.filter(matches)) {
    const text = readKubeconfigFile(item.file);
    if (text === "") continue;
    const result = removeKubeconfigContext(text, item.context, item.previous, item.file);
    if (!result.removed) continue;
    writeKubeconfigFile(item.file, result.text);
    removed.push({ file: item.file, context: item.context, switchedTo: result.switchedTo });
  }
  if (list.some(matches)) writeClientConfig({ ...config, [SECTION]: list.filter((item) => !matches(item)) });
  return removed;
}
