// The provider's interaction step (GET /oidc/interaction/<uid>): the provider sends a browser here when it needs to
// know who is signing in. The answer is the person's platform session: with one, the interaction finishes at once
// (login = the user's uid, at the time the person logged in to the platform; consent = a grant of what the client
// asked for); without one, the browser goes to the platform's login page and comes back here afterwards.

import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { OIDC_MOUNT, type SessionPerson } from "./platform-oidc-provider.ts";

/** The platform's login page; `return` brings the browser back to the interaction. */
export const LOGIN_PAGE = "/login";

/** Where the browser goes next: back to the provider (finished) or to the login page; or nowhere (expired). */
export type InteractionOutcome = { kind: "finished" | "login"; location: string } | { kind: "expired" };

export function interactionPath(uid: string): string {
  return `${OIDC_MOUNT}/interaction/${encodeURIComponent(uid)}`;
}

export function loginRedirect(uid: string): string {
  return `${LOGIN_PAGE}?return=${encodeURIComponent(interactionPath(uid))}`;
}

/** Finishes the interaction of this browser (its interaction cookie), or says where the browser must go first. */
export async function continueInteraction(
  provider: Provider,
  request: IncomingMessage,
  response: ServerResponse,
  person: SessionPerson | undefined,
): Promise<InteractionOutcome> {
  let details: Awaited<ReturnType<Provider["interactionDetails"]>>;
  try {
    details = await provider.interactionDetails(request, response);
  } catch {
    return { kind: "expired" };
  }
  if (!person) return { kind: "login", location: loginRedirect(details.uid) };
  const accountId = person.user.uid;
  const login = { accountId, ts: Math.floor(person.loginMs / 1000) };
  // The grant normally comes from loadExistingGrant; a consent prompt (scopes it did not cover) is granted here.
  let consent: { grantId: string } | undefined;
  if (details.prompt.name === "consent" && details.session?.accountId === accountId) {
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId, clientId: String(details.params.client_id ?? "") });
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    consent = { grantId: await grant.save() };
  }
  const location = await provider.interactionResult(
    request,
    response,
    { login, ...(consent ? { consent } : {}) },
    {
      mergeWithLastSubmission: false,
    },
  );
  return { kind: "finished", location };
}
