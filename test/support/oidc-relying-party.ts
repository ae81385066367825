// A relying party of the platform's OpenID provider for tests: openid-client (discovery, PKCE, code exchange) over
// HTTPS trusting the platform's CA, and a browser with a cookie jar that follows the provider's redirects (and the
// forms that post themselves) until it leaves the platform or reaches its login page. Every token, code and key it
// sees is remembered in `secrets`, for the tests that check nothing of them was logged.

import assert from "node:assert/strict";
import * as client from "openid-client";
import type { AuthClient } from "./auth-client.ts";
import { formsOf, TestBrowser } from "./browser.ts";
import { caFetch } from "./ca-fetch.ts";
import type { PlatformProcess } from "./platform-process.ts";

export const SCOPE = "openid profile email groups offline_access";

export interface Authorized {
  /** Where the provider sent the browser off the platform (the client's redirect URI). */
  location?: URL;
  /** The platform's login page the browser was sent to (the console's). */
  login?: URL;
  status: number;
  body: string;
}

export interface Started {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

export type Tokens = Awaited<ReturnType<typeof client.authorizationCodeGrant>>;

export class OidcRelyingParties {
  readonly secrets: string[] = [];
  readonly #platform: PlatformProcess;
  readonly #api: AuthClient;
  readonly #fetch: ReturnType<typeof caFetch>;

  constructor(platform: PlatformProcess, api: AuthClient) {
    this.#platform = platform;
    this.#api = api;
    this.#fetch = caFetch([platform.caPem]);
  }

  issuer(): string {
    return `${this.#platform.url}/oidc`;
  }

  /** A browser holding the platform session of a password login (as the console's login page leaves it). */
  async signedIn(username: string, password: string, browser = new TestBrowser([this.#platform.caPem])) {
    const login = await this.#api.login(username, password);
    assert.equal(login.status, 200, login.body);
    const key = login.json().accessKey as string;
    this.secrets.push(key);
    await browser.jar.setCookie(`vcp_session=${key}; Path=/; Secure; HttpOnly; SameSite=Lax`, this.#platform.url);
    return browser;
  }

  /** Follows the provider's redirects and self-posting forms until the browser leaves the platform or must log in. */
  async authorize(browser: TestBrowser, url: URL | string): Promise<Authorized> {
    const origin = this.#platform.url;
    let current = url.toString();
    let form: Record<string, string> | undefined;
    for (let hop = 0; hop < 15; hop++) {
      const response = await browser.fetch(current, form ? { form } : {});
      form = undefined;
      const location = response.headers.location;
      if (response.status === 200 && /Submitting Callback/.test(response.body)) {
        const [post] = formsOf({ ...response, trail: [] });
        if (new URL(post.action).origin !== origin) return { location: new URL(post.action), ...response };
        current = post.action;
        form = post.fields;
        continue;
      }
      if (response.status < 300 || response.status >= 400 || typeof location !== "string") return response;
      const next = new URL(location, current);
      if (next.origin !== origin) return { location: next, status: response.status, body: response.body };
      if (next.pathname === "/login") return { login: next, status: response.status, body: response.body };
      current = next.toString();
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** A relying party after discovery: confidential with a secret, public (PKCE only) without. */
  async relyingParty(id: string, secret?: string): Promise<client.Configuration> {
    const options = { [client.customFetch]: this.#fetch };
    const configuration = secret
      ? await client.discovery(new URL(this.issuer()), id, secret, undefined, options)
      : await client.discovery(new URL(this.issuer()), id, undefined, client.None(), options);
    configuration[client.customFetch] = this.#fetch;
    return configuration;
  }

  async start(rp: client.Configuration, redirectUri: string, extra: Record<string, string> = {}): Promise<Started> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(rp, {
      redirect_uri: redirectUri,
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
      ...extra,
    });
    return { url, verifier, state, nonce };
  }

  /** The whole code flow of a signed-in browser: authorization, redirect, code exchange with PKCE. */
  async codeFlow(browser: TestBrowser, rp: client.Configuration, redirectUri: string): Promise<Tokens> {
    const started = await this.start(rp, redirectUri);
    const answer = await this.authorize(browser, started.url);
    assert.ok(answer.location, `expected a redirect to the client, got ${answer.status}: ${answer.body.slice(0, 300)}`);
    assert.equal(answer.location.origin + answer.location.pathname, redirectUri);
    const tokens = await client.authorizationCodeGrant(rp, answer.location, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
      idTokenExpected: true,
    });
    this.remember(tokens);
    this.secrets.push(answer.location.searchParams.get("code") ?? "");
    return tokens;
  }

  remember(tokens: { access_token?: string; refresh_token?: string; id_token?: string }): void {
    for (const token of [tokens.access_token, tokens.refresh_token, tokens.id_token])
      if (token) this.secrets.push(token);
  }
}

/** The OAuth error (and HTTP status) a relying party call failed with. */
export async function oauthError(work: Promise<unknown>): Promise<{ error?: string; status?: number }> {
  try {
    await work;
  } catch (error) {
    const e = error as { error?: string; status?: number; cause?: { error?: string } };
    return { error: e.error ?? e.cause?.error, status: e.status };
  }
  assert.fail("expected an OAuth error");
}
