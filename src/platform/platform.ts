// Composition root of the management platform. The start: preconditions (nothing is written when the start cannot
// succeed), the store module opens, every module's kinds are registered in the one registry, then every module
// starts with the finished registry (platform-modules.ts, in order). Each close is on one AsyncDisposableStack, so a
// start that fails at any step closes what was opened, and close() runs the same code (docs/architecture.md).

import { resolve } from "node:path";
import { defaultSettings, LiveSettings } from "../config/settings.ts";
import { createApiMetrics } from "../http/metrics.ts";
import { loadUserCertificates } from "../pki/tls.ts";
import { Registry } from "../registry/registry.ts";
import { checkDataDirectory, ensureDataDirectory } from "../storage/data-directory.ts";
import { auditDirectories } from "./audit-directories.ts";
import { checkDataDirPermissions, restrictUmask } from "./data-dir-permissions.ts";
import { managementResources } from "./management-resources.ts";
import { declaredKinds, startModules } from "./platform-module.ts";
import { platformModules } from "./platform-modules.ts";
import type { PlatformOptions, RunningPlatform } from "./platform-options.ts";
import { checkPortFree } from "./port-check.ts";
import { StoreModule } from "./store-module.ts";

export { ADMIN_KUBECONFIG_FILE, API_PREFIX } from "./api-server-module.ts";
export type { PlatformOptions, RunningPlatform } from "./platform-options.ts";

export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const checked = await checkPreconditions(options);
  const stack = new AsyncDisposableStack();
  try {
    const running = await startOn(stack, options, checked);
    const closing = stack.move();
    return { ...running, close: () => closing.disposeAsync() };
  } catch (error) {
    await stack.disposeAsync().catch((closeError: unknown) => {
      options.logger?.warn({ err: String(closeError) }, "closing after a failed start failed");
    });
    throw error;
  }
}

interface Checked {
  dataDir: string;
  userTls?: { certPem: string; keyPem: string };
  auditDirs: string[];
}

/** Preconditions first: nothing (admin credentials, store, certificates) is written when the start cannot succeed. */
async function checkPreconditions(options: PlatformOptions): Promise<Checked> {
  const dataDir = resolve(options.dataDir);
  restrictUmask();
  await checkPortFree(options.host, options.port);
  await checkDataDirectory(dataDir);
  if (!options.allowInsecurePermissions) {
    const keyFiles = [options.tlsKeyFile, options.encryptionKeyFile].filter((file) => file !== undefined);
    await checkDataDirPermissions(
      dataDir,
      keyFiles.map((file) => resolve(file)),
    );
  }
  // Served certificates too: a start that fails on them after bootstrapping would show the admin key to nobody.
  const userTls =
    options.tlsCertFile && options.tlsKeyFile
      ? await loadUserCertificates(options.tlsCertFile, options.tlsKeyFile)
      : undefined;
  await ensureDataDirectory(dataDir);
  // The audit log stays in a directory of its own, which overlaps none of the platform's files (checked at start).
  const auditDirs = auditDirectories({
    dataDir,
    given: options.auditDirs,
    keyFiles: [options.encryptionKeyFile, options.tlsKeyFile, options.tlsCertFile].filter((f) => f !== undefined),
  });
  return { dataDir, userTls, auditDirs };
}

/** The store opens, every module's kinds are registered, every module starts; each close goes onto `stack`. */
async function startOn(
  stack: AsyncDisposableStack,
  options: PlatformOptions,
  checked: Checked,
): Promise<Omit<RunningPlatform, "close">> {
  const { dataDir } = checked;
  const beforeStart = options.testOnlyBeforeStart;
  const metrics = createApiMetrics();
  const settings = options.settings ?? new LiveSettings(defaultSettings());
  // Defragmentation waits for the maintenance window, which the Config systems' module (made below) keeps.
  let maintenanceOpen = () => true;
  const store = new StoreModule({
    ...{ dataDir, metrics, etcd: options.etcd, encryptionKeyFile: options.encryptionKeyFile },
    ...{ storePageLimit: options.storePageLimit, housekeeping: options.store, logger: options.logger },
    mayDefragment: () => maintenanceOpen(),
  });
  stack.defer(() => store.close());
  await beforeStart?.(store.name);
  await store.open();
  // The registry is over the store's storage; it is finished before any other module starts.
  const registry = new Registry(store.storage, store.registryOptions());
  const modules = platformModules({ ...checked, options, store, registry, settings, metrics });
  maintenanceOpen = () => modules.configSystems.maintenanceOpen();
  for (const definition of managementResources(declaredKinds([store, ...modules.list]))) {
    registry.register(definition);
  }
  await startModules(modules.list, { registry }, stack, { beforeStart });
  const { url, port } = modules.server.address;
  return {
    url,
    consoleUrl: modules.console.built ? `${url}/` : undefined,
    port,
    dataDir,
    createdAdminKey: modules.identity.bootstrap.createdKey,
    createdAdminPassword: modules.identity.bootstrap.createdPassword,
    registry,
    settings,
  };
}
