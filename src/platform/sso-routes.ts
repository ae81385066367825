// Single sign-on endpoints, served as plugin routes (public; customHttpHeaders on every answer):
//   GET  /auth/info              the login methods for a login page: password on/off, each connector's id,
//                                display name and type
//   GET  /auth/<id>/login        starts a login: ?return=<relative path of this platform> (where to end), or
//                                ?cli_redirect=http://127.0.0.1:<port>/<path>&cli_state=<state> (CLI login)
//   GET|POST /auth/<id>/callback finishes it (POST: SAML's HTTP-POST binding)
//   POST /auth/logout            deletes the caller's Login key (bearer or session cookie), clears the cookie; a
//                                browser of an OIDC login with postLogoutRedirectURI goes on to the provider. Without
//                                a bearer token only the platform's own pages may ask (request-site.ts: the console
//                                header, Sec-Fetch-Site or Origin): another site cannot log a person out (CSRF)
//   GET  /auth/logout            a page with the logout button (a GET changes nothing)
// Browsers get HTML pages (a refusal is a 403 page naming the rule); other clients get a Kubernetes Status.

import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errors, isStatusError, StatusError, successStatus } from "../apimachinery/errors.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { KeyEntry } from "../identity/auth-index.ts";
import { SESSION_COOKIE, sessionCookie } from "../identity/session-cookie.ts";
import type { ConnectorSet } from "../identity/sso/connector-set.ts";
import { LOGIN_STATE_COOKIE_PATH, type LoginStates, LoginStateTooLarge } from "../identity/sso/login-state.ts";
import { autoPostPage, escapeHtml, formPage, type HtmlPage, messagePage } from "../identity/sso/pages.ts";
import type { SsoAccounts } from "../identity/sso/sso-accounts.ts";
import { SsoFailure, SsoRefusal } from "../identity/sso/types.ts";
import { safeReturnPath as returnPathOf } from "../utils/safe-return-path.ts";
import { ownOrigins, requestSite } from "./request-site.ts";

export const INFO_PATH = "/auth/info";
export const LOGOUT_PATH = "/auth/logout";
export { SESSION_COOKIE };
/** The Set-Cookie value that ends a browser's platform session. */
export const CLEAR_SESSION_COOKIE = `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`;
const MAX_PARAM_LENGTH = 64 * 1024;
const CLI_STATE = /^[A-Za-z0-9_-]{16,128}$/;

export interface SsoRoutesOptions {
  settings: LiveSettings;
  connectors: ConnectorSet;
  /** Logins in progress, sealed into the browser that started them. */
  logins: LoginStates;
  accounts: SsoAccounts;
  /** https://<platform host>: where the providers send browsers back to. */
  baseUrl(): string;
  /** The stored key a plain access key stands for; a 401 StatusError saying why when it is not usable. */
  keyOf(accessKey: string): Promise<KeyEntry | undefined>;
  /** The connector a Login key came from (its spec.identity.connector). */
  connectorOfKey(name: string): Promise<string | undefined>;
  deleteKey(name: string, uid: string): Promise<void>;
  logger?: { warn(object: object, message: string): void; info(object: object, message: string): void };
}

/** The cookies of a Cookie header, by name. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of String(header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) out.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return out;
}

const cookies = (request: FastifyRequest) => parseCookies(request.headers.cookie);
const clearLoginCookie = (name: string) =>
  `${name}=; Path=${LOGIN_STATE_COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Lax`;

function wantsHtml(request: FastifyRequest): boolean {
  return /text\/html/i.test(String(request.headers.accept ?? ""));
}

/** Query (GET) or form (POST) parameters, single-valued. */
function parameters(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (search: URLSearchParams) => {
    for (const [name, value] of search) {
      if (value.length > MAX_PARAM_LENGTH) throw errors.badRequest(`parameter ${name} is too long`);
      if (!(name in out)) out[name] = value;
    }
  };
  add(new URL(request.url, "https://platform.invalid").searchParams);
  if (request.method === "POST" && Buffer.isBuffer(request.body)) {
    if (!/application\/x-www-form-urlencoded/i.test(String(request.headers["content-type"] ?? ""))) {
      throw new StatusError(415, "UnsupportedMediaType", "the callback accepts application/x-www-form-urlencoded");
    }
    add(new URLSearchParams(request.body.toString("utf8")));
  }
  return out;
}

/** A path of this platform only (src/utils/safe-return-path.ts: no open redirect in any encoding), normalised. */
export function safeReturnPath(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  const path = returnPathOf(value);
  if (path === undefined) throw errors.badRequest("return must be a relative path of this platform, such as /projects");
  return path;
}

/** The CLI's loopback address: http, a loopback host and an explicit port, nothing else. */
export function cliRedirect(value: string | undefined, state: string | undefined): { redirect: string; state: string } {
  if (!value || !URL.canParse(value)) throw errors.badRequest("cli_redirect must be the CLI's loopback address");
  const url = new URL(value);
  const loopback = ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
  if (url.protocol !== "http:" || !loopback || url.port === "" || url.username || url.password) {
    throw errors.badRequest("cli_redirect must be http://127.0.0.1:<port>/... (the CLI's loopback address)");
  }
  if (!state || !CLI_STATE.test(state)) throw errors.badRequest("cli_state must be 16 to 128 URL-safe characters");
  return { redirect: url.toString(), state };
}

export function ssoRoutes(options: SsoRoutesOptions): (app: FastifyInstance) => void {
  const { settings, connectors, logins, accounts } = options;
  const headers = (reply: FastifyReply) => reply.headers(settings.current().auth.customHttpHeaders);
  const callbackUrl = (id: string) => {
    const configured = connectors.settingsOf(id)?.config.redirectURI;
    return typeof configured === "string" && configured ? configured : `${options.baseUrl()}/auth/${id}/callback`;
  };
  /** The connector as configured now; a block it cannot be built from (a missing file) is a 503 naming it. */
  const connectorOf = (id: string) => {
    try {
      return connectors.get(id);
    } catch (error) {
      options.logger?.warn({ connector: id, err: String(error) }, "a login connector cannot be built from the Config");
      throw errors.serviceUnavailable(`login through ${id} is misconfigured: ${(error as Error).message}`);
    }
  };
  const sendPage = (reply: FastifyReply, code: number, page: HtmlPage) =>
    reply.code(code).headers(page.headers).send(page.html);

  /** A failure as a page for browsers, as a Status for other clients. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: StatusError, title: string) => {
    if (!wantsHtml(request)) throw error;
    return sendPage(reply, error.code, messagePage(title, [error.status.message ?? title]));
  };

  const start = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    headers(reply);
    const { id } = request.params;
    let connector: ReturnType<typeof connectors.get>;
    try {
      connector = connectorOf(id);
    } catch (error) {
      return refuse(request, reply, error as StatusError, "Login unavailable");
    }
    if (!connector) return refuse(request, reply, errors.pathNotFound(), "Unknown login method");
    const params = parameters(request);
    const returnPath = safeReturnPath(params.return);
    const cli = params.cli_redirect !== undefined ? cliRedirect(params.cli_redirect, params.cli_state) : undefined;
    const state = randomBytes(32).toString("base64url");
    let started: Awaited<ReturnType<typeof connector.start>>;
    try {
      started = await connector.start({ state, callbackUrl: callbackUrl(id) });
    } catch (error) {
      options.logger?.warn({ connector: id, err: String(error) }, "starting a single sign-on login failed");
      const message = error instanceof Error ? error.message : "the provider cannot be reached";
      return refuse(
        request,
        reply,
        errors.serviceUnavailable(`login through ${id} cannot start: ${message}`),
        "Login failed",
      );
    }
    let sealed: string;
    try {
      sealed = logins.seal(state, { connectorId: id, connector: started.state, returnPath, cli });
    } catch (error) {
      if (!(error instanceof LoginStateTooLarge)) throw error;
      return refuse(request, reply, errors.badRequest("the return path is too long"), "Login failed");
    }
    // Nothing is stored but a SAML request's id, in memory (bounded: saml-connector.ts RequestIds): the login travels
    // sealed in this browser, which binds the callback to it (login CSRF).
    // SAML posts back cross-site, so its cookie is SameSite=None.
    const sameSite = started.type === "form" ? "None" : "Lax";
    const setCookies = logins.stale(cookies(request)).map(clearLoginCookie);
    setCookies.push(
      `${logins.cookieName(state)}=${sealed}; Path=${LOGIN_STATE_COOKIE_PATH}; Max-Age=600; HttpOnly; Secure; SameSite=${sameSite}`,
    );
    reply.header("set-cookie", setCookies);
    if (started.type === "redirect") return reply.code(302).header("cache-control", "no-store").redirect(started.url);
    return sendPage(reply, 200, autoPostPage("Continuing to your identity provider", started.action, started.fields));
  };

  const callback = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    headers(reply);
    const { id } = request.params;
    const params = parameters(request);
    const state = params.state ?? params.RelayState ?? "";
    const cookieName = logins.cookieName(state);
    const login = logins.open(state, cookies(request).get(cookieName));
    reply.header("set-cookie", clearLoginCookie(cookieName));
    if (!login || login.connectorId !== id) {
      return refuse(
        request,
        reply,
        errors.badRequest(
          "this login is unknown, has expired (ten minutes), or was started in another browser; start the login again here",
        ),
        "Login expired",
      );
    }
    let connector: ReturnType<typeof connectors.get>;
    try {
      connector = connectorOf(id);
    } catch (error) {
      return refuse(request, reply, error as StatusError, "Login unavailable");
    }
    const connectorSettings = connectors.settingsOf(id);
    if (!connector || !connectorSettings) {
      return refuse(request, reply, errors.pathNotFound(), "Unknown login method");
    }
    let result: Awaited<ReturnType<SsoAccounts["login"]>>;
    try {
      const identity = await connector.finish({ params, state: login.connector, callbackUrl: callbackUrl(id) });
      result = await accounts.login(connectorSettings, identity);
    } catch (error) {
      if (error instanceof SsoRefusal) {
        options.logger?.info({ connector: id, rule: error.rule }, "single sign-on login refused");
        return refuse(request, reply, errors.forbiddenPath(error.message), "Access denied");
      }
      if (error instanceof SsoFailure) {
        options.logger?.warn({ connector: id, err: error.message }, "single sign-on login failed");
        return refuse(
          request,
          reply,
          errors.unauthorized(`login through ${id} failed: ${error.message}`),
          "Login failed",
        );
      }
      if (isStatusError(error)) return refuse(request, reply, error, "Login failed");
      throw error;
    }
    if (login.cli) {
      // The key goes to the CLI's loopback server in a POST body (not in a URL that browser history keeps).
      return sendPage(
        reply,
        200,
        autoPostPage("Finishing the login in your terminal", login.cli.redirect, {
          state: login.cli.state,
          accessKey: result.accessKey,
          user: result.user.name,
        }),
      );
    }
    const ttl = settings.current().auth.loginAccessKeyTTLSeconds;
    reply.header("set-cookie", sessionCookie(result.accessKey, ttl));
    // Checked again where it is used: the only way out of a login is a path of this platform.
    const returnPath = returnPathOf(login.returnPath);
    if (returnPath) return reply.code(303).header("cache-control", "no-store").redirect(returnPath);
    return sendPage(
      reply,
      200,
      messagePage("Logged in", [
        `You are logged in to the platform as ${result.user.username}.`,
        "You can close this window.",
      ]),
    );
  };

  /** GET: what a link or a typed address gets, the button that logs out (nothing changes on a GET). */
  const logoutPage = async (request: FastifyRequest, reply: FastifyReply) => {
    headers(reply);
    if (!wantsHtml(request)) {
      reply.header("allow", "POST");
      throw new StatusError(405, "MethodNotAllowed", "log out with POST /auth/logout");
    }
    const form = `<form method="post" action="${escapeHtml(LOGOUT_PATH)}"><p><button type="submit">Log out</button></p></form>`;
    return sendPage(reply, 200, formPage("Log out", ["Log out of the platform in this browser?"], form));
  };

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    headers(reply);
    const authorization = request.headers.authorization;
    const cookie = cookies(request).get(SESSION_COOKIE);
    // Another site's page can make a browser post here (and the answer's cookie would end the session): only the
    // platform's own pages, or a bearer token (which no other site can attach), may log out.
    const site = requestSite(request.headers, ownOrigins(request.headers, options.baseUrl()));
    if (authorization === undefined && (site === "cross-site" || (cookie && site !== "same-origin"))) {
      return refuse(
        request,
        reply,
        errors.forbiddenPath(
          "logout must come from the platform's own pages (or send the key as a bearer token); a request from another site is refused",
        ),
        "Logout refused",
      );
    }
    // A bearer credential must be valid (401 saying why, as on every API path); a stale cookie is just cleared.
    let key: KeyEntry | undefined;
    if (authorization !== undefined) {
      const bearer = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
      if (!bearer) throw errors.unauthorized("invalid bearer token");
      key = await options.keyOf(bearer);
    } else if (cookie) {
      key = await options.keyOf(cookie).catch(() => undefined);
    } else if (!wantsHtml(request)) {
      throw errors.unauthorized();
    }
    reply.header("set-cookie", CLEAR_SESSION_COOKIE);
    let providerLogout: string | undefined;
    if (key?.type === "Login") {
      const connectorId = await options.connectorOfKey(key.name);
      await options.deleteKey(key.name, key.uid);
      const connectorSettings = connectorId ? connectors.settingsOf(connectorId) : undefined;
      const postLogout = connectorSettings?.config.postLogoutRedirectURI;
      if (connectorSettings?.kind === "oidc" && typeof postLogout === "string" && postLogout && wantsHtml(request)) {
        providerLogout = await connectors
          .get(connectorSettings.id)
          ?.logoutUrl?.({ postLogoutRedirectURI: postLogout })
          .catch(() => undefined);
      }
    }
    if (providerLogout) return reply.code(303).header("cache-control", "no-store").redirect(providerLogout);
    if (wantsHtml(request)) return sendPage(reply, 200, messagePage("Logged out", ["You are logged out."]));
    return reply
      .code(200)
      .header("content-type", "application/json")
      .send(JSON.stringify(successStatus({})));
  };

  return (app) => {
    app.get(INFO_PATH, async (_request, reply) => {
      headers(reply);
      const body = {
        password: { enabled: !settings.current().auth.passwordLoginDisabled },
        connectors: connectors.list().map((c) => ({
          ...c,
          loginPath: `/auth/${encodeURIComponent(c.id)}/login`,
        })),
      };
      return reply
        .code(200)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .send(JSON.stringify(body));
    });
    app.get("/auth/:id/login", start);
    app.get("/auth/:id/callback", callback);
    app.post("/auth/:id/callback", callback);
    app.get(LOGOUT_PATH, logoutPage);
    app.post(LOGOUT_PATH, logout);
  };
}
