// Small helpers for tests that talk to cluster API servers through @kubernetes/client-node.

import { ApiException, KubeConfig } from "@kubernetes/client-node";

/** The object, or undefined when the server answers 404. */
export async function maybe<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
}

/** A KubeConfig loaded from a file. */
export function kubeConfig(path: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return config;
}
