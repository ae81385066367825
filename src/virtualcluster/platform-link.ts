// A virtual cluster's link to the platform, for the runtime (runtime.ts): the connection (when the settings name a
// platform), the platform users it lets in (access keys reviewed through the platform, endpoint tokens verified
// offline against its JWKS), and the credentials the audit forwarder sends with.

import type { Logger } from "pino";
import type { InstanceUsage } from "../apis/management/v1/virtualclusterinstance-schema.ts";
import type { RunningClusterApiServer } from "../cluster-apiserver/cluster-api-server.ts";
import type { TokenVerifier } from "../identity/token-verifier.ts";
import type { PlatformCredentials } from "./connect/api-key-lookup.ts";
import { type ConnectionState, PlatformConnection } from "./connect/platform-connection.ts";
import { PlatformIssuers } from "./connect/platform-issuers.ts";
import { PlatformUserAuthenticator } from "./connect/platform-user-authenticator.ts";
import type { KubeAccess } from "./kube/kube-access.ts";
import { coreCalls, rbacCalls } from "./kube/kube-calls.ts";
import { KubeHttp } from "./kube/kube-http.ts";
import type { PlatformSettings } from "./settings/types.ts";

export interface PlatformLinkOptions {
  name: string;
  namespace: string;
  /** external.platform of the settings; without it the link never connects. */
  platform?: PlatformSettings;
  host: KubeAccess;
  kubernetesVersion: string;
  heartbeatIntervalMs?: number;
  env?: NodeJS.ProcessEnv;
  /** What the runtime used so far, sent with every heartbeat (cost control). */
  usage?: () => Promise<InstanceUsage>;
  logger?: Logger;
}

export class PlatformLink {
  private readonly options: PlatformLinkOptions;
  /** The connection's few host calls get their own pool; the syncer's informers and writes keep theirs. */
  private readonly hostHttp: KubeHttp;
  // Tokens are the platform's by its key; their issuer may be any address the platform has had (platform-issuers.ts).
  private readonly issuers: PlatformIssuers;
  private connection?: PlatformConnection;
  // The verifier (and jose with it) loads once the platform is known: a virtual cluster without one never needs it.
  private verifier?: Promise<TokenVerifier>;
  private verifierFor?: string;
  private credentialsNow?: PlatformCredentials;

  constructor(options: PlatformLinkOptions) {
    this.options = options;
    this.hostHttp = new KubeHttp(options.host, { userAgent: "virtualcluster-platform-connection" });
    this.issuers = new PlatformIssuers(() => this.connection?.runCycle() ?? Promise.resolve());
  }

  /** The connection's state (undefined without a platform). */
  state(): ConnectionState | undefined {
    return this.connection?.state();
  }

  credentials(): PlatformCredentials | undefined {
    return this.credentialsNow;
  }

  /** Platform users: only while connected, and only those the platform lets reach this instance. */
  authenticator(): PlatformUserAuthenticator {
    return new PlatformUserAuthenticator({
      target: () => {
        const state = this.connection?.state();
        return state?.connected && state.project && state.instance
          ? { project: state.project, name: state.instance.name }
          : undefined;
      },
      review: (credential) => {
        const api = this.connection?.api();
        if (!api) throw Object.assign(new Error("not connected to the platform"), { code: 503 });
        return api.review(credential);
      },
      verifyToken: async (token) => {
        if (!this.verifier) throw new Error("the platform's signing keys are not known yet");
        const ready = await this.verifier;
        const verified = await this.issuers.verify(() => ready.verify(token));
        return {
          name: verified.name,
          uid: verified.uid,
          kind: verified.kind,
          scope: verified.scope,
          exp: verified.exp,
        };
      },
    });
  }

  /** Connects, when the settings name a platform; its failures never stop the control plane. */
  async connect(server: RunningClusterApiServer): Promise<void> {
    const { options } = this;
    if (!options.platform) return;
    const endpoint = new URL(server.url).host;
    this.connection = new PlatformConnection({
      name: options.name,
      namespace: options.namespace,
      platform: options.platform,
      host: { core: coreCalls(this.hostHttp), rbac: rbacCalls(this.hostHttp) },
      describe: () => ({ kubernetesVersion: options.kubernetesVersion, servingCaPem: server.caPem, endpoint }),
      onClientCertificateAuthority: (pem) => server.setClientCertificateAuthorities([pem]),
      onConnected: (credentials, self) => this.connected(credentials, self.platformHost),
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      env: options.env,
      usage: options.usage,
      logger: options.logger,
    });
    await this.connection.start();
  }

  async close(): Promise<void> {
    await this.connection?.close();
    this.hostHttp.close();
  }

  private connected(credentials: PlatformCredentials, platformHost: string | undefined): void {
    this.credentialsNow = credentials;
    this.issuers.learn(credentials.host, platformHost);
    // One verifier per platform address; it refetches the JWKS itself when it meets an unknown key id.
    if (this.verifierFor === credentials.host) return;
    this.verifierFor = credentials.host;
    const jwks = {
      jwksUrl: `https://${credentials.host}/.well-known/jwks.json`,
      ca: credentials.certificateAuthorityPem,
      insecure: credentials.insecure,
      issuers: () => this.issuers.list(),
    };
    this.verifier = import("../identity/token-verifier.ts").then(({ createTokenVerifier }) =>
      createTokenVerifier(jwks),
    );
  }
}
