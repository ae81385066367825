// Password login, served as a plugin route inside the API server's pipeline (logout: sso-routes.ts):
//   POST /auth/password/login {username, password} -> {user, username, accessKey}  (public; a new Login key)
// From the web console (header X-Platform-Console) the key goes into the HttpOnly session cookie instead of the body.
// Failed logins are throttled per username at a client address first, so guesses from elsewhere never lock the real
// user out, then per address and per username overall (src/auth/login-throttle.ts; 429 + Retry-After). The request body is parsed
// here with messages that never quote it, since it holds a password.

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errors } from "../apimachinery/errors.ts";
import { parseYamlDocument } from "../apimachinery/parse-yaml-document.ts";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { AuthIndex, UserEntry } from "../identity/auth-index.ts";
import type { PasswordStore } from "../identity/password-store.ts";
import { CONSOLE_HEADER, sessionCookie } from "../identity/session-cookie.ts";

export const LOGIN_PATH = "/auth/password/login";
const MAX_FIELD_LENGTH = 1024;
const INVALID = "Invalid username or password";

export interface LoginRoutesOptions {
  index: AuthIndex;
  fresh: () => Promise<void>;
  passwords: PasswordStore;
  throttle: LoginThrottle;
  settings: LiveSettings;
  /** Creates a Login key for the user; resolves to the plain key. */
  issueLoginKey(user: UserEntry): Promise<string>;
}

/** A YAML body, within the nesting bound (JSON.parse needs none: nothing walks the value). */
function yamlBody(raw: string): unknown {
  const { document } = parseYamlDocument(raw, { schema: "core" });
  if (!document || document.errors.length > 0) throw new Error("not a YAML document");
  return document.toJS({ maxAliasCount: 10 });
}

function credentials(request: FastifyRequest): { username: string; password: string } {
  const raw = Buffer.isBuffer(request.body) ? request.body.toString("utf8") : "";
  let body: unknown;
  try {
    const yaml = /yaml/i.test(String(request.headers["content-type"] ?? ""));
    body = yaml ? yamlBody(raw) : JSON.parse(raw);
  } catch {
    throw errors.badRequest("the request body must be a JSON object with username and password");
  }
  const { username, password } = (body ?? {}) as Record<string, unknown>;
  if (typeof username !== "string" || typeof password !== "string" || !username || !password) {
    throw errors.badRequest("username and password are required strings");
  }
  if (username.length > MAX_FIELD_LENGTH || password.length > MAX_FIELD_LENGTH) {
    throw errors.unauthorized(INVALID);
  }
  return { username, password };
}

export function loginRoutes(options: LoginRoutesOptions): (app: FastifyInstance) => void {
  const { index, passwords, throttle, settings } = options;
  const headers = (reply: FastifyReply) => reply.headers(settings.current().auth.customHttpHeaders);

  return (app) => {
    app.post(LOGIN_PATH, async (request, reply) => {
      headers(reply);
      if (settings.current().auth.passwordLoginDisabled) throw errors.forbiddenPath("password login is disabled");
      const { username, password } = credentials(request);
      const address = request.socket?.remoteAddress;
      const wait = throttle.retryAfter(username, address);
      if (wait > 0) throw errors.tooManyRequests("too many failed login attempts; try again later", wait);
      await options.fresh();
      const user = index.userByUsername(username);
      const ok = await passwords.verify(user && { name: user.name, uid: user.uid }, password);
      if (!ok || !user) {
        throttle.failed(username, address);
        throw errors.unauthorized(INVALID);
      }
      // Only a caller who knows the password learns that the user is disabled.
      if (user.disabled) throw errors.unauthorized("user is disabled");
      throttle.succeeded(username, address);
      const accessKey = await options.issueLoginKey(user);
      if (request.headers[CONSOLE_HEADER]) {
        const ttl = settings.current().auth.loginAccessKeyTTLSeconds;
        return reply
          .code(200)
          .header("set-cookie", sessionCookie(accessKey, ttl))
          .header("cache-control", "no-store")
          .header("content-type", "application/json")
          .send(JSON.stringify({ user: user.name, username: user.username }));
      }
      return reply
        .code(200)
        .header("content-type", "application/json")
        .send(JSON.stringify({ user: user.name, username: user.username, accessKey }));
    });
  };
}
