// The connector contract of single sign-on: a connector starts a login (where to send the browser) and finishes it
// at the callback (who the provider says the person is). What a login then does with that identity (users, teams,
// the Login key) is the same for every connector (sso-accounts.ts).

/** Who the provider says logged in. Never holds a provider token. */
export interface SsoIdentity {
  /**
   * The provider's stable, never reassigned id of the person: the only key to an account, qualified with the
   * connector id (sso:<connector>:<userId>). OIDC subject, the code hosts' numeric account id, idpB's
   * <tenant id>/<object id>, SAML's <IdP entity id>|<persistent NameID>.
   */
  userId: string;
  /** The login name the provider suggests (with any configured prefix): profile data, a new user's name. */
  username: string;
  preferredUsername?: string;
  email?: string;
  /** True only when the provider states the e-mail verified (a JSON true); false for anything else. */
  emailVerified: boolean;
  displayName?: string;
  groups: string[];
  /** Claims the config allows through (OIDC allowedExtraClaims). */
  extraClaims?: Record<string, string[]>;
}

/** What a connector keeps between start and finish (kept server-side, keyed by the login's state). */
export type ConnectorState = Record<string, string>;

/** How the browser is sent to the provider. */
export type LoginStart =
  | { type: "redirect"; url: string; state: ConnectorState }
  /** A form the browser POSTs to the provider (SAML HTTP-POST binding). */
  | { type: "form"; action: string; fields: Record<string, string>; state: ConnectorState };

export interface StartInput {
  /** Random, one-time: the OAuth `state` parameter or SAML RelayState. */
  state: string;
  /** Where the provider sends the browser back (this platform's /auth/<id>/callback). */
  callbackUrl: string;
}

export interface CallbackInput {
  /** Query parameters of a GET callback, or the form fields of a POST callback. */
  params: Record<string, string>;
  /** What start() returned as state. */
  state: ConnectorState;
  callbackUrl: string;
}

export interface Connector {
  readonly id: string;
  readonly kind: string;
  start(input: StartInput): Promise<LoginStart>;
  finish(input: CallbackInput): Promise<SsoIdentity>;
  /** Where to send the browser after logout (OIDC RP-initiated logout); undefined: no provider logout. */
  logoutUrl?(input: { postLogoutRedirectURI?: string }): Promise<string | undefined>;
}

/**
 * A login the configured rules refuse (a required group, organisation, domain or tenant), or a person the platform
 * will not let in. The message names the rule and is shown to the person; it never holds a token.
 */
export class SsoRefusal extends Error {
  readonly rule: string;
  constructor(rule: string, message: string) {
    super(message);
    this.name = "SsoRefusal";
    this.rule = rule;
  }
}

/**
 * The provider failed or answered something unusable (network error, bad token, bad signature). Shown to the
 * person as a failed login (401); the message names what failed, never a secret.
 */
export class SsoFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SsoFailure";
  }
}
