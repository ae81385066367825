// Kubeconfig documents written for clients (the admin kubeconfig now; instance kubeconfigs later).

import { stringify } from "yaml";

export interface KubeconfigOptions {
  name: string;
  server: string;
  certificateAuthorityPem?: string;
  user: { token: string } | { clientCertificatePem: string; clientKeyPem: string };
  userName?: string;
  namespace?: string;
}

export function buildKubeconfig(options: KubeconfigOptions): string {
  const cluster: Record<string, unknown> = { server: options.server };
  if (options.certificateAuthorityPem) {
    cluster["certificate-authority-data"] = Buffer.from(options.certificateAuthorityPem).toString("base64");
  }
  const user: Record<string, unknown> =
    "token" in options.user
      ? { token: options.user.token }
      : {
          "client-certificate-data": Buffer.from(options.user.clientCertificatePem).toString("base64"),
          "client-key-data": Buffer.from(options.user.clientKeyPem).toString("base64"),
        };
  const userName = options.userName ?? options.name;
  const context: Record<string, unknown> = { cluster: options.name, user: userName };
  if (options.namespace) context.namespace = options.namespace;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: options.name, cluster }],
    users: [{ name: userName, user }],
    contexts: [{ name: options.name, context }],
    "current-context": options.name,
    preferences: {},
  });
}

/** `https://host:port` with IPv6 brackets, and the wildcard listen address replaced by loopback. */
export function serverUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return reachable.includes(":") ? `https://[${reachable}]:${port}` : `https://${reachable}:${port}`;
}
