// A login between its start and its callback, carried by the browser that started it: nothing is written to the
// store before someone authenticated (issue 30), so a flood of login starts costs the platform no storage at all,
// and a callback may reach any replica (they share the sealing secrets) or a restarted process. What a login keeps
// is secret (the PKCE verifier, the nonce, the SAML request id, the CLI's loopback address and state), so it is
// sealed (src/auth/sealed-box.ts, AES-256-GCM) into an HttpOnly cookie under /auth/, named after the start of the
// login's state and bound to all of it: the callback opens it only for the state the provider sent back, within ten
// minutes, in the browser that started the login (login CSRF). The callback clears it; a start keeps the browser's
// other logins in progress to the newest few, so abandoned starts (or a page that starts many) cannot grow the
// browser's cookies past what a request may carry. A replayed callback gains nothing: an authorization code is
// spent at the provider, and a SAML assertion's ID is recorded once its signature was verified (seen-ids.ts).

import { createHash } from "node:crypto";
import { SealedBox } from "../../auth/sealed-box.ts";
import type { ConnectorState } from "./types.ts";

/** Single sign-on state in the store (SAML assertion IDs; the store-held logins of earlier versions). */
export const SSO_STATE_PREFIX = "/internal/sso/";
export const LOGIN_STATE_TTL_MS = 10 * 60 * 1000;
export const LOGIN_STATE_COOKIE_PATH = "/auth/";
const COOKIE_PREFIX = "vcp_sso_";
/** Logins in progress one browser keeps (several tabs); a start drops the oldest beyond. */
const KEPT_PER_BROWSER = 3;
/** Browsers keep cookies of up to 4096 bytes (name, value and attributes); stay clear of it. */
const MAX_COOKIE_VALUE = 3800;

export interface PendingLogin {
  connectorId: string;
  /** What the connector keeps (PKCE verifier, nonce, SAML request id). */
  connector: ConnectorState;
  /** A relative path of this platform to end on. */
  returnPath?: string;
  /** CLI login: the loopback address the key is delivered to, and the CLI's own one-time state. */
  cli?: { redirect: string; state: string };
}

interface Sealed {
  login: PendingLogin;
  /** The whole state's digest (the cookie's name holds its start). */
  state: string;
  startedMs: number;
}

export interface LoginStateOptions {
  /** The platform's cookie secrets (every replica holds the same). */
  secrets: readonly string[];
  now?: () => number;
}

/** Too much to carry in a cookie (a very long return path). */
export class LoginStateTooLarge extends Error {}

const digest = (state: string) => createHash("sha256").update(state).digest("base64url");
const nameOf = (state: string) => `${COOKIE_PREFIX}${state.slice(0, 16)}`;

export class LoginStates {
  readonly #box: SealedBox;
  readonly #now: () => number;

  constructor(options: LoginStateOptions) {
    this.#box = new SealedBox({ secrets: options.secrets, purpose: "sso-login", now: options.now });
    this.#now = options.now ?? Date.now;
  }

  /** The cookie that carries a login of `state`. */
  cookieName(state: string): string {
    return nameOf(state);
  }

  /** The sealed cookie value for a login just started with `state`; throws LoginStateTooLarge. */
  seal(state: string, login: PendingLogin): string {
    const now = this.#now();
    const sealed = this.#box.seal(
      { login, state: digest(state), startedMs: now } satisfies Sealed,
      nameOf(state),
      now + LOGIN_STATE_TTL_MS,
    );
    if (sealed.length > MAX_COOKIE_VALUE) throw new LoginStateTooLarge("the login's state is too large for a cookie");
    return sealed;
  }

  /** The login of `state` from its cookie's value; undefined when absent, changed, of another state, or expired. */
  open(state: string, sealed: string | undefined): PendingLogin | undefined {
    if (!state) return undefined;
    const opened = this.#box.open<Sealed>(sealed, nameOf(state));
    return opened?.state === digest(state) ? opened.login : undefined;
  }

  /**
   * The login cookies of a request (name to value) a new start should clear: all but the newest KEPT_PER_BROWSER - 1
   * still valid, and any that no longer opens.
   */
  stale(cookies: ReadonlyMap<string, string>): string[] {
    const open: { name: string; startedMs: number }[] = [];
    const stale: string[] = [];
    for (const [name, value] of cookies) {
      if (!name.startsWith(COOKIE_PREFIX)) continue;
      const sealed = this.#box.open<Sealed>(value, name);
      if (sealed) open.push({ name, startedMs: sealed.startedMs });
      else stale.push(name);
    }
    open.sort((a, b) => b.startedMs - a.startedMs);
    return [...stale, ...open.slice(KEPT_PER_BROWSER - 1).map((cookie) => cookie.name)];
  }
}
