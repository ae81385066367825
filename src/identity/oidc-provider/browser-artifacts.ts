// The OpenID provider's artifacts of people who have not authenticated yet, kept in their own browser instead of the
// store (issue 30: no store write before authentication): every Interaction (an authorization request waiting for
// a login, or for the provider to resume it) and every Session without an account (what the logout page's xsrf
// secret lives in). Each is sealed (src/auth/sealed-box.ts) with the platform's cookie secrets, which every replica
// shares, into an HttpOnly cookie under the provider's mount, bound to the artifact's id and expiring with it; the
// adapter of those models reads and writes the cookies of the request being served (run() names it). A Session that
// holds an account (someone logged in) goes to the store as before, and so does everything made after a login
// (grants, codes, tokens).
// A new interaction keeps the browser's others to the newest few (several tabs), so abandoned sign-ins (or a page
// that starts many) cannot grow its cookies past what a request may carry. A copy of an interaction's cookie
// replays nothing beyond that browser's own sign-in within the hour, and the same copy would hold the platform
// session cookie anyway.

import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Adapter, AdapterPayload } from "oidc-provider";
import { SealedBox } from "../../auth/sealed-box.ts";
import { errors } from "./oidc-provider-module.ts";

/** Browsers keep cookies of up to 4096 bytes (name, value and attributes); stay clear of it. */
const MAX_COOKIE_VALUE = 3800;
const INTERACTION_COOKIE = "vcp_oidc_i_";
const ANONYMOUS_SESSION_COOKIE = "vcp_oidc_anonymous";
/** Interactions one browser keeps (several tabs signing in); a new one drops the oldest beyond. */
const KEPT_INTERACTIONS = 3;
/** An anonymous session only holds a logout form's secret: an hour is plenty. */
const ANONYMOUS_SESSION_TTL_SECONDS = 60 * 60;

interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
}

interface Sealed {
  id: string;
  payload: AdapterPayload;
}

export interface BrowserArtifactsOptions {
  /** The platform's cookie secrets (every replica holds the same). */
  secrets: readonly string[];
  /** Where the provider is mounted: the cookies' path. */
  path: string;
  now?: () => number;
}

function cookiesOf(request: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of String(request.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) out.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return out;
}

export class BrowserArtifacts {
  readonly #box: SealedBox;
  readonly #path: string;
  readonly #now: () => number;
  readonly #exchange = new AsyncLocalStorage<Exchange>();

  constructor(options: BrowserArtifactsOptions) {
    this.#box = new SealedBox({ secrets: options.secrets, purpose: "oidc-provider-artifact", now: options.now });
    this.#path = options.path;
    this.#now = options.now ?? Date.now;
  }

  /** Runs `serve` with the request and response whose cookies hold the artifacts. */
  run<T>(request: IncomingMessage, response: ServerResponse, serve: () => T): T {
    return this.#exchange.run({ request, response }, serve);
  }

  /** The adapter of a model: interactions in the browser; sessions there until they hold an account. */
  adapterFor(model: string, stored: Adapter): Adapter {
    if (model === "Interaction") return this.#interactions();
    if (model === "Session") return this.#sessions(stored);
    return stored;
  }

  #interactions(): Adapter {
    const name = (id: string) => `${INTERACTION_COOKIE}${id}`;
    return {
      upsert: async (id, payload, expiresIn) => {
        this.#pruneInteractions(name(id));
        this.#write(name(id), id, payload, expiresIn);
      },
      find: async (id) => this.#read(name(id), id),
      consume: async (id) => {
        const payload = this.#read(name(id), id);
        if (!payload) return;
        const now = Math.floor(this.#now() / 1000);
        const expiresIn = typeof payload.exp === "number" ? payload.exp - now : undefined;
        this.#write(name(id), id, { ...payload, consumed: now }, expiresIn);
      },
      destroy: async (id) => this.#clear(name(id)),
      findByUid: async () => undefined,
      findByUserCode: async () => undefined,
      revokeByGrantId: async () => undefined,
    };
  }

  #sessions(stored: Adapter): Adapter {
    const held = (id: string) => this.#read(ANONYMOUS_SESSION_COOKIE, id);
    return {
      ...stored,
      upsert: async (id, payload, expiresIn) => {
        if (typeof payload.accountId !== "string") {
          const ttl = Math.min(expiresIn ?? ANONYMOUS_SESSION_TTL_SECONDS, ANONYMOUS_SESSION_TTL_SECONDS);
          return this.#write(ANONYMOUS_SESSION_COOKIE, id, payload, ttl);
        }
        if (held(id)) this.#clear(ANONYMOUS_SESSION_COOKIE);
        await stored.upsert(id, payload, expiresIn);
      },
      find: async (id) => held(id) ?? stored.find(id),
      destroy: async (id) => {
        if (held(id)) this.#clear(ANONYMOUS_SESSION_COOKIE);
        await stored.destroy(id);
      },
    };
  }

  #read(name: string, id: string): AdapterPayload | undefined {
    const exchange = this.#exchange.getStore();
    if (!exchange) return undefined;
    const sealed = this.#box.open<Sealed>(cookiesOf(exchange.request).get(name), id);
    return sealed?.id === id ? sealed.payload : undefined;
  }

  /** Before an interaction is written: the browser's other interactions beyond the newest few are cleared. */
  #pruneInteractions(keep: string): void {
    const exchange = this.#exchange.getStore();
    if (!exchange) return;
    const held: { name: string; iat: number }[] = [];
    for (const [name, value] of cookiesOf(exchange.request)) {
      if (!name.startsWith(INTERACTION_COOKIE) || name === keep) continue;
      const sealed = this.#box.open<Sealed>(value, name.slice(INTERACTION_COOKIE.length));
      const iat = sealed?.payload.iat;
      if (typeof iat === "number") held.push({ name, iat });
      else this.#clear(name);
    }
    held.sort((a, b) => b.iat - a.iat);
    for (const { name } of held.slice(KEPT_INTERACTIONS - 1)) this.#clear(name);
  }

  /** `expiresIn`: seconds from now (the adapter contract's). */
  #write(name: string, id: string, payload: AdapterPayload, expiresIn: number | undefined): void {
    const exchange = this.#exchange.getStore();
    if (!exchange) throw new Error(`the OpenID provider wrote ${name} outside of a request`);
    const seconds = Math.max(1, Math.floor(expiresIn ?? ANONYMOUS_SESSION_TTL_SECONDS));
    const sealed = this.#box.seal({ id, payload } satisfies Sealed, id, this.#now() + seconds * 1000);
    if (sealed.length > MAX_COOKIE_VALUE) {
      throw new errors.InvalidRequest("the authorization request is too large; send fewer or shorter parameters");
    }
    this.#setCookie(exchange.response, `${name}=${sealed}; Max-Age=${seconds}`);
  }

  #clear(name: string): void {
    const exchange = this.#exchange.getStore();
    if (exchange) this.#setCookie(exchange.response, `${name}=; Max-Age=0`);
  }

  #setCookie(response: ServerResponse, cookie: string): void {
    if (response.headersSent) return;
    response.appendHeader("set-cookie", `${cookie}; Path=${this.#path}; HttpOnly; Secure; SameSite=Lax`);
  }
}
