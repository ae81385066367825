// The API server module: the HTTPS server of the platform (src/http/api-server.ts) with every module's kinds, routes
// and health checks, the identity module's authenticators and authorizer and the audit hooks. It starts after every
// other module and closes first: it stops accepting, lets the modules drain (agents' tunnels end), then waits for the
// connections left. Once listening, the admin kubeconfig is rewritten for the current address and certificate.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { withConfigUpsert } from "../apis/management/v1/config-store.ts";
import type { LiveSettings } from "../config/settings.ts";
import { type RunningApiServer, startApiServer } from "../http/api-server.ts";
import type { ApiMetrics } from "../http/metrics.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import { buildKubeconfig, serverUrl } from "../pki/kubeconfig.ts";
import { ensureServingCertificates } from "../pki/tls.ts";
import type { AuditModule } from "./audit-module.ts";
import { ADMIN_KEY_FILE, ADMIN_USER } from "./bootstrap.ts";
import type { ConfigModule } from "./config-module.ts";
import { versionWithReleaseChannel } from "./config-systems/release-channel.ts";
import { isConsolePageRequest } from "./console/console-routes.ts";
import type { IdentityModule } from "./identity-module.ts";
import { type ModuleContext, type ModuleDeclarations, moduleRoutes, type PlatformModule } from "./platform-module.ts";

export const API_PREFIX = "/kubernetes/management";
export const ADMIN_KUBECONFIG_FILE = "admin.kubeconfig";

export interface ApiServerModuleOptions {
  host: string;
  port: number;
  dataDir: string;
  /** --tls-cert-file and --tls-key-file, read at the preconditions; else the data directory's own certificates. */
  userTls?: { certPem: string; keyPem: string };
  /** This replica's address as the other replicas reach it (default: the address it listens on). */
  advertiseUrl?: string;
  limits?: Partial<ServerLimits>;
  settings: LiveSettings;
  metrics: ApiMetrics;
  identity: IdentityModule;
  config: ConfigModule;
  audit: AuditModule;
  /** Every other module: their routes are served, and they drain when the server stops. */
  modules(): readonly ModuleDeclarations[];
  logger?: Logger;
}

export class ApiServerModule implements PlatformModule {
  readonly name = "api-server";
  private readonly options: ApiServerModuleOptions;
  private server?: RunningApiServer;
  private caPem?: string;
  private listening?: { url: string; port: number };

  constructor(options: ApiServerModuleOptions) {
    this.options = options;
  }

  async start({ registry }: ModuleContext): Promise<void> {
    const { options } = this;
    const { identity, settings } = options;
    const tls = options.userTls
      ? { ...options.userTls, caPem: undefined }
      : await ensureServingCertificates({ dataDir: options.dataDir, hosts: [options.host] });
    this.caPem = tls.caPem;
    const routes = moduleRoutes(options.modules());
    this.server = await startApiServer({
      resources: withConfigUpsert(identity.servedStores(registry), options.config.controller),
      ...identity.serverOptions(),
      // The web console's pages for browser navigations (console/console-routes.ts).
      publicPaths: routes.publicPaths,
      isPublicRequest: isConsolePageRequest,
      plugins: routes.plugins,
      passthrough: routes.passthrough,
      hooks: options.audit.hooks,
      authenticatePublicPath: (path) => path === "/version" && settings.current().authenticateVersionEndpoint,
      tls: { certPem: tls.certPem, keyPem: tls.keyPem },
      host: options.host,
      port: options.port,
      pathPrefixes: [API_PREFIX],
      version: versionWithReleaseChannel(settings),
      logger: options.logger,
      metrics: options.metrics,
      limits: options.limits,
      healthChecks: routes.healthChecks,
    });
    const url = serverUrl(options.host, this.server.port);
    this.listening = { url, port: this.server.port };
    identity.setServerHost(new URL(url).host);
    await writeAdminKubeconfig(options.dataDir, `${url}${API_PREFIX}`, this.caPem);
  }

  /** Where the server listens. */
  get address(): { url: string; port: number } {
    if (!this.listening) throw new Error("the API server is not started");
    return this.listening;
  }

  /** This replica's base URL as the others reach it, and its serving CA; the URL is empty until it listens. */
  self(): { url: string; caPem?: string } {
    const url = this.listening ? (this.options.advertiseUrl ?? this.listening.url) : "";
    return { url, caPem: this.caPem };
  }

  async close(): Promise<void> {
    const { server } = this;
    this.server = undefined;
    if (!server) return;
    // The server waits for every connection; long-lived ones (agents' tunnels) end first.
    const closed = server.close();
    for (const module of this.options.modules()) await module.drain?.();
    await closed;
  }
}

/** Rewritten on every start so the kubeconfig follows the current address and certificate. */
async function writeAdminKubeconfig(dataDir: string, server: string, caPem: string | undefined): Promise<void> {
  let key: string;
  try {
    key = (await readFile(join(dataDir, ADMIN_KEY_FILE), "utf8")).trim();
  } catch {
    return; // the key file was removed on purpose: nothing to write
  }
  const document = buildKubeconfig({
    name: "virtualcluster-platform",
    server,
    certificateAuthorityPem: caPem,
    user: { token: key },
    userName: ADMIN_USER,
  });
  await writeFile(join(dataDir, ADMIN_KUBECONFIG_FILE), document, { mode: 0o600 });
}
