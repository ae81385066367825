// A real OpenID provider (the certified `oidc-provider` package) on a loopback HTTPS port: discovery, JWKS,
// authorization-code flow with PKCE, userinfo and RP-initiated logout. Its development login form accepts any
// login name (the password is ignored); the accounts below give each name its claims.

import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { type TestTls, testTls } from "./test-ca.ts";

export interface TestAccount {
  email?: string;
  /** A string ("true") too: providers that send it so must not count as verified. */
  email_verified?: boolean | string;
  name?: string;
  preferred_username?: string;
  groups?: string[];
  /** Only in the userinfo answer (not in the ID token): proves getUserInfo is used. */
  userinfoOnly?: Record<string, unknown>;
}

export interface OidcTestProvider {
  issuer: string;
  tls: TestTls;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  close(): Promise<void>;
}

export async function startOidcTestProvider(options: {
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
}): Promise<OidcTestProvider> {
  const tls = await testTls("oidc provider");
  const accounts = new Map<string, TestAccount>();
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "platform";
  const clientSecret = "oidc-test-client-s3cret";
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
      groups: ["groups"],
      department: ["department"],
    },
    scopes: ["openid", "email", "profile", "groups", "department", "offline_access"],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    cookies: { keys: ["oidc-test-cookie-key"] },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims(use) {
          const { userinfoOnly, ...claims } = account;
          return { sub: id, ...claims, ...(use === "userinfo" ? userinfoOnly : {}) };
        },
      };
    },
  });
  // The provider logs its development-only warnings once per process; they are expected here.
  server.on("request", provider.callback());
  return {
    issuer,
    tls,
    clientId,
    clientSecret,
    accounts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The fields of an oidc block pointing at this provider, as YAML lines indented by `indent`. */
export function oidcBlockYaml(
  provider: OidcTestProvider,
  options: { callbackUrl: string; caFile: string; indent: string; extra?: string[] },
): string {
  return [
    `issuerUrl: ${provider.issuer}`,
    `clientId: ${provider.clientId}`,
    `clientSecret: ${provider.clientSecret}`,
    `redirectURI: ${options.callbackUrl}`,
    `caFile: ${options.caFile}`,
    ...(options.extra ?? []),
  ]
    .map((line) => `${options.indent}${line}\n`)
    .join("");
}
