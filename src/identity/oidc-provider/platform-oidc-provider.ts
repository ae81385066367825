// The platform as an OpenID provider (Config status.oidc), built on the certified `oidc-provider` package and served
// under /oidc of the platform's port (issuer https://<platformHost>/oidc). What the platform decides:
//   - clients: read live from the settings on every lookup (adding or removing one through the Config needs no
//     restart); a client without a secret is public and must use PKCE; redirect URIs per redirect-uris.ts;
//   - who the person is: their platform session (the Login key cookie). The login prompt asks again whenever that
//     session is missing, ended or belongs to someone else than the provider's own session, so a console logout
//     (or a revoked key) ends single sign-on too. Clients are registered by administrators: what they ask of the
//     supported scopes is granted without a consent page;
//   - keys: ID tokens are signed with the platform's current signing key; the provider is rebuilt when the key
//     ring rotates (or the issuer changes), and the JWKS the discovery names is the key ring's, retired keys included;
//   - wrong client secrets (at the token, revocation and pushed authorization endpoints) are throttled as failed
//     logins are (per client at an address first, then per address and per client overall): past a limit every
//     attempt it covers, right secret or not, is a 429 with Retry-After until the wait is over;
//   - accounts and revocation: oidc-accounts.ts; refresh tokens as access keys: refresh-token-keys.ts;
//     persistence: store-adapter.ts, except what comes before a login (browser-artifacts.ts: in the browser).

import type { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import type { Adapter, AdapterPayload, ClientMetadata, Configuration, KoaContextWithOIDC } from "oidc-provider";
import type { SigningAlgorithm } from "../../auth/signing/signing-key.ts";
import type { OidcClientSettings, OidcProviderSettings } from "../../config/settings.ts";
import type { UserEntry } from "../auth-index.ts";
import { escapeHtml, formPage, type HtmlPage, messagePage } from "../sso/pages.ts";
import type { BrowserArtifacts } from "./browser-artifacts.ts";
import type { OidcAccounts } from "./oidc-accounts.ts";
import { errors, loadOidcProvider, providerContext } from "./oidc-provider-module.ts";
import { type RedirectRules, redirectAllowed } from "./redirect-uris.ts";
import type { OidcStore } from "./store-adapter.ts";

/** Where the provider is mounted on the platform's port. */
export const OIDC_MOUNT = "/oidc";
export const OIDC_SCOPES = ["openid", "offline_access", "profile", "email", "groups"] as const;
const HOUR = 60 * 60;
const DAY = 24 * HOUR;
/** Lifetimes, seconds. ID tokens stay well within the key ring's retention of retired keys (7 days). */
export const OIDC_TTL = {
  AccessToken: HOUR,
  AuthorizationCode: 60,
  IdToken: HOUR,
  Interaction: HOUR,
  RefreshToken: 14 * DAY,
  Grant: 14 * DAY,
  Session: 14 * DAY,
} as const;

/** The person behind a request's platform session. */
export interface SessionPerson {
  user: UserEntry;
  /** When the person logged in (the Login key's creation), epoch milliseconds. */
  loginMs: number;
}

/** Failed client authentications, counted per client id and per client address (a LoginThrottle). */
export interface ClientThrottle {
  /** Seconds the client must wait (0: may try now). */
  retryAfter(clientId: string, address: string | undefined): number;
  failed(clientId: string, address: string | undefined): void;
  succeeded(clientId: string, address: string | undefined): void;
}

/** A client that must wait: 429 with Retry-After (no OAuth error code names throttling; this one says wait). */
class ClientThrottled extends errors.OIDCProviderError {
  constructor(seconds: number) {
    super(429, "temporarily_unavailable");
    this.error_description = `too many failed authentications of this client; try again in ${seconds} seconds`;
  }
}

/** The key that signs: a private JWK with its id and algorithm. */
export interface ProviderSigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateJwk: Record<string, unknown>;
}

export interface PlatformOidcProviderOptions {
  settings(): OidcProviderSettings;
  /** https://<platform host>/oidc */
  issuer(): string;
  signingKey(): ProviderSigningKey;
  store: OidcStore;
  /** Interactions and anonymous sessions, sealed into the browser (never the store). */
  artifacts: BrowserArtifacts;
  accounts: OidcAccounts;
  /** Keys that sign the provider's cookies (first signs, all verify). */
  cookieKeys: string[];
  clientThrottle: ClientThrottle;
  /** The person behind a request's cookies (their platform session), if any. */
  sessionPerson(cookieHeader: string | undefined): Promise<SessionPerson | undefined>;
  /** Ends the platform session of a request's cookies; resolves to Set-Cookie values for the answer. */
  endPlatformSession(cookieHeader: string | undefined, accountId: string): Promise<string[]>;
  logger?: { error(object: object, message: string): void; warn(object: object, message: string): void };
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface Built {
  issuer: string;
  kid: string;
  /** The extra claim names the provider was built to release (joined). */
  extraClaims: string;
  provider: Provider;
  handle: Handler;
}

const sendPage = (ctx: KoaContextWithOIDC, status: number, page: HtmlPage) => {
  ctx.status = status;
  ctx.set(page.headers);
  ctx.body = page.html;
};

/**
 * Pushed authorization requests are stored (the browser comes later, with only their reference), so only a client
 * that authenticated may push one: a public client's "authentication" proves nothing, and storing what anyone sends
 * in its name would let an unauthenticated flood fill the store. Public clients send the request to /oidc/auth.
 */
function authenticatedPushes(stored: Adapter): Adapter {
  return {
    ...stored,
    upsert: async (id, payload, expiresIn) => {
      if (providerContext()?.oidc?.client?.clientAuthMethod === "none") {
        throw new errors.InvalidRequest(
          "pushed authorization requests need a client that authenticates; a public client sends its request to the authorization endpoint",
        );
      }
      await stored.upsert(id, payload, expiresIn);
    },
  };
}

/** The Config's client as oidc-provider metadata. `basic`: the request authenticates with HTTP Basic. */
export function clientMetadata(client: OidcClientSettings, alg: SigningAlgorithm, basic: boolean): ClientMetadata {
  // Redirect URIs are checked by redirect-uris.ts; these only have to be valid for the metadata schema.
  const uris = client.redirectURIs.filter((uri) => /^https?:\/\//.test(uri) && URL.canParse(uri));
  const listed = uris.length > 0 ? uris : ["http://127.0.0.1/"];
  const authentication: Partial<ClientMetadata> = client.clientSecret
    ? {
        client_secret: client.clientSecret,
        token_endpoint_auth_method: basic ? "client_secret_basic" : "client_secret_post",
      }
    : { token_endpoint_auth_method: "none" };
  return {
    client_id: client.clientId,
    client_name: client.name || client.clientId,
    ...authentication,
    redirect_uris: listed,
    post_logout_redirect_uris: listed,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    application_type: "web",
    id_token_signed_response_alg: alg,
  };
}

export class PlatformOidcProvider {
  readonly #options: PlatformOidcProviderOptions;
  #built?: Built;

  constructor(options: PlatformOidcProviderOptions) {
    this.#options = options;
  }

  /** Runs `serve` (the provider's handler, or a call of its interaction API) with this request's browser state. */
  serve<T>(request: IncomingMessage, response: ServerResponse, serve: () => T): T {
    return this.#options.artifacts.run(request, response, serve);
  }

  /**
   * The provider for the current issuer, signing key and extra claim names (rebuilt when one changed: oidc-provider
   * releases only the claims its configuration names). The package is loaded on the first call.
   */
  async current(): Promise<Built> {
    const oidc = await loadOidcProvider();
    const issuer = this.#options.issuer();
    const key = this.#options.signingKey();
    const names = this.#options.accounts.extraClaimNames();
    const extraClaims = names.join(" ");
    const built = this.#built;
    if (built && built.issuer === issuer && built.kid === key.kid && built.extraClaims === extraClaims) return built;
    const provider = this.#build(oidc, issuer, key, names);
    this.#built = { issuer, kid: key.kid, extraClaims, provider, handle: provider.callback() };
    return this.#built;
  }

  #rules(clientId: string): RedirectRules {
    const settings = this.#options.settings();
    const client = settings.clients.find((c) => c.clientId === clientId);
    return {
      registered: client?.redirectURIs ?? [],
      wildcard: settings.wildcardRedirect,
      publicClient: !client?.clientSecret,
    };
  }

  #clients(): Adapter {
    const unsupported = async () => {
      throw new Error("clients come from the platform Config");
    };
    return {
      find: async (id) => {
        const client = this.#options.settings().clients.find((c) => c.clientId === id);
        if (!client) return undefined;
        const authorization = providerContext()?.get("authorization") ?? "";
        return clientMetadata(
          client,
          this.#options.signingKey().alg,
          /^basic\s/i.test(authorization),
        ) as AdapterPayload;
      },
      upsert: unsupported,
      findByUid: unsupported,
      findByUserCode: unsupported,
      consume: unsupported,
      destroy: unsupported,
      revokeByGrantId: unsupported,
    };
  }

  #build(
    oidc: typeof import("oidc-provider"),
    issuer: string,
    key: ProviderSigningKey,
    extraClaims: readonly string[],
  ): Provider {
    const { interactionPolicy } = oidc;
    const { store, artifacts, accounts, logger } = this.#options;
    const clients = this.#clients();
    const policy = interactionPolicy.base();
    policy.get("login")?.checks.add(
      new interactionPolicy.Check(
        "platform_session",
        "the platform session is missing, has ended, or belongs to someone else",
        async (ctx) => {
          const person = await this.#options.sessionPerson(ctx.get("cookie") || undefined);
          return person !== undefined && person.user.uid === ctx.oidc.session?.accountId
            ? interactionPolicy.Check.NO_NEED_TO_PROMPT
            : interactionPolicy.Check.REQUEST_PROMPT;
        },
      ),
    );
    const supportedScopes = new Set<string>(OIDC_SCOPES);

    const configuration: Configuration = {
      adapter: (model: string) => {
        if (model === "Client") return clients;
        const stored = store.adapterFor(model);
        return model === "PushedAuthorizationRequest"
          ? authenticatedPushes(stored)
          : artifacts.adapterFor(model, stored);
      },
      clients: [],
      async findAccount(_ctx, sub) {
        const user = await accounts.active(sub);
        if (!user) return undefined;
        return { accountId: sub, claims: async () => ({ ...accounts.claims(user) }) };
      },
      claims: {
        // Extra claims (spec.extraClaims, allowedExtraClaims) come with openid: a client needs no scope for them.
        openid: ["sub", ...extraClaims],
        profile: ["name", "preferred_username"],
        email: ["email", "email_verified"],
        groups: ["groups"],
      },
      scopes: [...OIDC_SCOPES],
      // Claims of the granted scopes go into the ID token too: Kubernetes' OIDC authentication reads them there.
      conformIdTokenClaims: false,
      responseTypes: ["code"],
      allowOmittingSingleRegisteredRedirectUri: false,
      jwks: { keys: [{ ...key.privateJwk, kid: key.kid, alg: key.alg, use: "sig" }] },
      clientDefaults: {
        grant_types: ["authorization_code", "refresh_token"],
        id_token_signed_response_alg: key.alg,
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
      cookies: {
        names: { session: "vcp_oidc_session", interaction: "vcp_oidc_interaction", resume: "vcp_oidc_resume" },
        long: { httpOnly: true, sameSite: "lax", path: OIDC_MOUNT },
        short: { httpOnly: true, sameSite: "lax" },
        keys: this.#options.cookieKeys,
      },
      pkce: { required: (_ctx, client) => client.clientAuthMethod === "none" },
      // A refresh token for every code exchange of a client that may refresh. The provider drops offline_access
      // unless the request also says prompt=consent (OpenID Connect Core 11), which the tools people use with an
      // identity provider (Grafana, Argo CD, kubelogin) do not send; such refresh tokens end with the session.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      ttl: { ...OIDC_TTL },
      features: {
        devInteractions: { enabled: false },
        userinfo: { enabled: true },
        revocation: {
          enabled: true,
          allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
        },
        rpInitiatedLogout: {
          enabled: true,
          async logoutSource(ctx, form) {
            const client = ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId;
            // Without logout=yes the provider ends only this client's session (its standard second choice).
            const buttons =
              '<p><button type="submit" name="logout" value="yes">Sign out</button> ' +
              `<button type="submit">${client ? `Sign out of ${escapeHtml(client)} only` : "Stay signed in"}</button></p>`;
            sendPage(
              ctx,
              200,
              formPage(
                "Sign out",
                [
                  client
                    ? `${client} asks to sign you out. Signing out ends your session on the platform and in every application that signed you in through it.`
                    : "Signing out ends your session on the platform and in every application that signed you in through it.",
                ],
                form.replace("</form>", `${buttons}</form>`),
              ),
            );
          },
          async postLogoutSuccessSource(ctx) {
            sendPage(ctx, 200, messagePage("Signed out", ["You are signed out. You can close this window."]));
          },
        },
      },
      interactions: {
        policy,
        url: (_ctx, interaction) => `${OIDC_MOUNT}/interaction/${interaction.uid}`,
      },
      // Administrators register the clients: they get what they ask of the supported scopes without a consent page.
      async loadExistingGrant(ctx) {
        const { oidc } = ctx;
        const accountId = oidc.session?.accountId;
        const clientId = oidc.client?.clientId;
        if (!accountId || !clientId) return undefined;
        const grantId = oidc.result?.consent?.grantId || oidc.session?.grantIdFor(clientId);
        let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
        if (grant && (grant.accountId !== accountId || grant.clientId !== clientId)) grant = undefined;
        const fresh = !grant;
        grant ??= new oidc.provider.Grant({ accountId, clientId });
        const granted = new Set((grant.getOIDCScope() ?? "").split(" "));
        const missing = [...oidc.requestParamScopes].filter((s) => supportedScopes.has(s) && !granted.has(s));
        const claims = [...oidc.requestParamClaims].filter((c) => !grant.getOIDCClaims().includes(c));
        if (missing.length) grant.addOIDCScope(missing.join(" "));
        if (claims.length) grant.addOIDCClaims(claims);
        if (fresh || missing.length || claims.length) await grant.save();
        return grant;
      },
      clientBasedCORS: (_ctx, origin, client) =>
        client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) === true,
      async renderError(ctx, out) {
        const text = [out.error, out.error_description].filter(Boolean).join(": ");
        sendPage(ctx, Math.max(ctx.status, 400), messagePage("Sign-in failed", [text]));
      },
    };

    const provider = new oidc.default(issuer, configuration);
    const rules = (clientId: string) => this.#rules(clientId);
    provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(uri: string) {
      return redirectAllowed(uri, rules(this.clientId));
    };
    provider.Client.prototype.postLogoutRedirectUriAllowed = function postLogoutRedirectUriAllowed(uri: string) {
      return redirectAllowed(uri, rules(this.clientId));
    };
    // Every client_secret_basic and client_secret_post authentication comes through here.
    const throttle = this.#options.clientThrottle;
    const compareSecret = provider.Client.prototype.compareClientSecret;
    provider.Client.prototype.compareClientSecret = async function compareClientSecret(actual: string) {
      const ctx = providerContext();
      const address = ctx?.req.socket.remoteAddress;
      const wait = throttle.retryAfter(this.clientId, address);
      if (wait > 0) {
        ctx?.set("retry-after", String(wait));
        throw new ClientThrottled(wait);
      }
      const matches = await compareSecret.call(this, actual);
      if (matches) {
        throttle.succeeded(this.clientId, address);
        return true;
      }
      throttle.failed(this.clientId, address);
      if (throttle.retryAfter(this.clientId, address) > 0) {
        logger?.warn({ client: this.clientId }, "OpenID client throttled after failed client authentications");
      }
      return false;
    };
    // Signing out of the provider (the person confirmed on our page) ends the platform session as well.
    provider.use(async (ctx, next) => {
      await next();
      const oidc = (ctx as KoaContextWithOIDC).oidc as KoaContextWithOIDC["oidc"] | undefined;
      const accountId = oidc?.route === "end_session_confirm" && oidc.params?.logout ? oidc.session?.accountId : "";
      if (accountId && ctx.status === 303) {
        const cookies = await this.#options.endPlatformSession(ctx.get("cookie") || undefined, accountId);
        for (const cookie of cookies) ctx.append("set-cookie", cookie);
      }
    });
    provider.on("server_error", (_ctx, error) => logger?.error({ err: String(error) }, "OpenID provider error"));
    (provider as unknown as EventEmitter).on("error", (error: unknown) =>
      logger?.error({ err: String(error) }, "OpenID provider request failed"),
    );
    return provider;
  }
}
