// The platform's OpenID provider on its HTTPS port, as plugin routes (public paths; customHttpHeaders on every answer):
//   GET  /oidc/.well-known/openid-configuration, /oidc/auth, /oidc/token, /oidc/me, /oidc/token/revocation,
//        /oidc/session/end ...     oidc-provider itself (it reads request bodies itself: nothing here parses them,
//                                  so no token or secret of a body reaches the audit log)
//   GET  /oidc/jwks                the key ring's JWKS (retired keys stay until their tokens expire)
//   GET  /oidc/interaction/<uid>   who is signing in: the platform session, or the login page first
// With status.oidc.enabled false every /oidc path is a 404.

import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errors } from "../apimachinery/errors.ts";
import type { LiveSettings } from "../config/settings.ts";
import { continueInteraction } from "../identity/oidc-provider/interaction.ts";
import {
  OIDC_MOUNT,
  type PlatformOidcProvider,
  type SessionPerson,
} from "../identity/oidc-provider/platform-oidc-provider.ts";
import { messagePage } from "../identity/sso/pages.ts";

export interface OidcRoutesOptions {
  settings: LiveSettings;
  provider: PlatformOidcProvider;
  jwks(): { keys: unknown[] };
  sessionPerson(cookieHeader: string | undefined): Promise<SessionPerson | undefined>;
}

/** The provider's own path for a request path under /oidc ("/oidc" itself is its "/"). */
function providerPath(url: string): string {
  const rest = url.slice(OIDC_MOUNT.length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

export function oidcRoutes(options: OidcRoutesOptions): (app: FastifyInstance) => Promise<void> {
  const { settings, provider } = options;
  const open = (reply: FastifyReply) => {
    if (!settings.current().oidc.enabled) throw errors.pathNotFound();
    reply.headers(settings.current().auth.customHttpHeaders);
  };

  const delegate = async (request: FastifyRequest, reply: FastifyReply) => {
    open(reply);
    const { handle } = await provider.current();
    const raw = request.raw as IncomingMessage & { originalUrl?: string };
    // Mounted like an express sub-app: the provider routes on the rest of the path and builds its URLs from the
    // mount (the request's path without the /kubernetes/management prefix, which rewriteUrl already removed).
    raw.originalUrl = request.url;
    raw.url = providerPath(request.url);
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    provider.serve(raw, reply.raw, () => handle(raw, reply.raw));
    return reply;
  };

  return async (app) => {
    await app.register(async (scope) => {
      // The provider reads (and limits) request bodies itself.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));

      scope.get(`${OIDC_MOUNT}/jwks`, async (_request, reply) => {
        open(reply);
        return reply
          .code(200)
          .header("content-type", "application/jwk-set+json")
          .header("cache-control", "public, max-age=60")
          .send(JSON.stringify(options.jwks()));
      });

      scope.get(`${OIDC_MOUNT}/interaction/:uid`, async (request, reply) => {
        open(reply);
        reply.header("cache-control", "no-store");
        const person = await options.sessionPerson(request.headers.cookie);
        const built = await provider.current();
        const outcome = await provider.serve(request.raw, reply.raw, () =>
          continueInteraction(built.provider, request.raw, reply.raw, person),
        );
        if (outcome.kind !== "expired") return reply.code(303).redirect(outcome.location);
        const page = messagePage("Sign-in expired", [
          "This sign-in request is unknown or has expired. Go back to the application and sign in again.",
        ]);
        return reply.code(400).headers(page.headers).send(page.html);
      });

      scope.all(OIDC_MOUNT, delegate);
      scope.all(`${OIDC_MOUNT}/*`, delegate);
    });
  };
}
