// The SAML 2.0 connector: an AuthnRequest by the HTTP-POST binding to ssoURL, and at the callback the Response
// checked twice over. @node-saml/node-saml verifies the XML signature (on the Response or the Assertion) against the
// configured certificates, InResponseTo, the validity window and the audience, and hands back the signed
// assertion only; this file then applies the platform's rules to that signed assertion: Status Success, Issuer =
// ssoIssuer, InResponseTo = the request this login sent, Destination and Recipient = redirectURI, a bearer
// SubjectConfirmation, NotBefore/NotOnOrAfter with a 30 s skew, the audience (entityIssuer, else redirectURI), and
// an assertion ID never seen before. Signatures are never read by hand. The person is the assertion's Issuer with a
// persistent NameID; any other NameID format is refused (identity()).
// `ca`/`caData` may hold the IdP's signing certificate itself or a CA: a certificate in the response's KeyInfo
// that the CA signed (and that is valid now) is trusted too.

import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type * as X509 from "@peculiar/x509";
import { configString, configStrings, notInGroups, readConfiguredFile } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { ProviderHttp } from "./provider-http.ts";
import type { SeenIds } from "./seen-ids.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure, SsoRefusal } from "./types.ts";

// Loaded untyped: their type declarations pull the browser DOM library into the whole program. Loaded on first use
// (a SAML login), so a platform without a SAML connector never holds node-saml and its XML libraries.
const require = createRequire(import.meta.url);

interface SamlLibraries {
  SAML: new (options: Record<string, unknown>) => SamlClient;
  DOMParser: new (options: {
    errorHandler: Record<string, (message: string) => void>;
  }) => {
    parseFromString(xml: string, type: string): XmlDocument;
  };
  select: (expression: string, node: XmlNode, single?: boolean) => unknown;
}

let libraries: SamlLibraries | undefined;

function samlLibraries(): SamlLibraries {
  if (libraries) return libraries;
  const xpath = require("xpath") as {
    useNamespaces(map: Record<string, string>): (expression: string, node: XmlNode, single?: boolean) => unknown;
  };
  libraries = {
    SAML: (require("@node-saml/node-saml") as Pick<SamlLibraries, "SAML">).SAML,
    DOMParser: (require("@xmldom/xmldom") as Pick<SamlLibraries, "DOMParser">).DOMParser,
    select: xpath.useNamespaces({
      samlp: "urn:oasis:names:tc:SAML:2.0:protocol",
      saml: "urn:oasis:names:tc:SAML:2.0:assertion",
    }),
  };
  return libraries;
}

/** The parts of the DOM this file reads. */
interface XmlNode {
  nodeType: number;
  nodeValue: string | null;
  textContent: string | null;
  localName: string;
  namespaceURI: string | null;
  getAttribute(name: string): string | null;
}
interface XmlDocument extends XmlNode {
  documentElement: XmlNode;
}
type Element = XmlNode;
type Node = XmlNode;
type Document = XmlDocument;

interface SamlClient {
  getAuthorizeMessageAsync(relayState: string): Promise<Record<string, unknown>>;
  validatePostResponseAsync(container: Record<string, string>): Promise<{
    profile: { getAssertionXml?: () => string } | null;
  }>;
}

/** node-saml's cache of request ids (CacheProvider). */
interface CacheItem {
  value: string;
  createdAt: number;
}

const SKEW_MS = 30_000;
const REQUEST_TTL_MS = 10 * 60 * 1000;
/** SAML logins started and not yet back, at most (about 300 bytes each). */
export const MAX_PENDING_REQUESTS = 10_000;
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";

/** NameID formats by their last component (Dex's short forms). */
const NAME_ID_FORMATS: Record<string, string> = {
  unspecified: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
  emailAddress: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  X509SubjectName: "urn:oasis:names:tc:SAML:1.1:nameid-format:X509SubjectName",
  WindowsDomainQualifiedName: "urn:oasis:names:tc:SAML:1.1:nameid-format:WindowsDomainQualifiedName",
  encrypted: "urn:oasis:names:tc:SAML:2.0:nameid-format:encrypted",
  entity: "urn:oasis:names:tc:SAML:2.0:nameid-format:entity",
  kerberos: "urn:oasis:names:tc:SAML:2.0:nameid-format:kerberos",
  persistent: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  transient: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
};

export function nameIdFormat(value: string | undefined): string {
  if (!value) return NAME_ID_FORMATS.persistent;
  if (value.startsWith("urn:")) return value;
  const found = Object.entries(NAME_ID_FORMATS).find(([short]) => short.toLowerCase() === value.toLowerCase());
  if (!found) throw new Error(`nameIDPolicyFormat ${value} is not a known NameID format`);
  return found[1];
}

const select = (expression: string, node: XmlNode): unknown => samlLibraries().select(expression, node);

function nodes(expression: string, context: Node): Element[] {
  return (select(expression, context) as Node[]).filter((n): n is Element => n.nodeType === 1);
}

function text(expression: string, context: Node): string | undefined {
  const found = select(`string(${expression})`, context) as unknown as string;
  return found === "" ? undefined : found;
}

function parseXml(xml: string): Document {
  const errors: string[] = [];
  const record = (message: string) => void errors.push(message);
  const { DOMParser } = samlLibraries();
  const doc = new DOMParser({ errorHandler: { error: record, fatalError: record, warning: () => {} } }).parseFromString(
    xml,
    "text/xml",
  );
  if (errors.length > 0 || !doc?.documentElement) throw new SsoFailure("the SAML response is not well-formed XML");
  return doc;
}

/** Every certificate of a PEM bundle, as PEM. */
function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function certificatesOf(config: Record<string, unknown>): string[] {
  const caData = configString(config, "caData");
  if (caData) return pemCertificates(Buffer.from(caData, "base64").toString("utf8"));
  const ca = configString(config, "ca");
  return ca ? pemCertificates(readConfiguredFile("ca", ca)) : [];
}

/**
 * A Map-backed cache of the request ids node-saml checks InResponseTo against (one use each). Anyone can start a
 * login, so it is bounded: ids leave after REQUEST_TTL_MS, swept from the oldest (the Map keeps the order they came
 * in) only as far as the first one still fresh, and past MAX_PENDING_REQUESTS the oldest goes first (its login, if
 * it ever comes back, is refused and starts again).
 */
export class RequestIds {
  private readonly ids = new Map<string, { value: string; createdAt: number }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  get size(): number {
    return this.ids.size;
  }

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    const now = this.now();
    for (const [id, item] of this.ids) {
      if (now - item.createdAt <= REQUEST_TTL_MS && this.ids.size < MAX_PENDING_REQUESTS) break;
      this.ids.delete(id);
    }
    if (this.ids.has(key)) return null;
    const item = { value, createdAt: now };
    this.ids.set(key, item);
    return item;
  }
  async getAsync(key: string): Promise<string | null> {
    return this.ids.get(key)?.value ?? null;
  }
  async removeAsync(key: string | null): Promise<string | null> {
    if (key === null) return null;
    const item = this.ids.get(key);
    this.ids.delete(key);
    return item?.value ?? null;
  }
}

export class SamlConnector extends ConfiguredConnector {
  readonly kind = "saml";
  private readonly seen: SeenIds;
  private readonly certificates: string[];
  private readonly requestIds = new RequestIds();
  private readonly skipSignature: boolean;

  constructor(id: string, config: Record<string, unknown>, seen: SeenIds) {
    super(id, config, new ProviderHttp("SAML identity provider"));
    this.seen = seen;
    this.certificates = certificatesOf(config);
    this.skipSignature = config.insecureSkipSignatureValidation === true;
    if (!this.skipSignature && this.certificates.length === 0) {
      throw new Error("saml: caData or ca must hold at least one PEM certificate");
    }
    nameIdFormat(configString(config, "nameIDPolicyFormat"));
  }

  private redirectUri(callbackUrl: string): string {
    return configString(this.config, "redirectURI") ?? callbackUrl;
  }

  private audience(callbackUrl: string): string {
    return configString(this.config, "entityIssuer") ?? this.redirectUri(callbackUrl);
  }

  private saml(callbackUrl: string, idpCert: string[], requestId?: string): SamlClient {
    const { SAML } = samlLibraries();
    return new SAML({
      // HTTP-POST binding: the request is base64 XML, not deflated (SAML bindings 3.5.4).
      skipRequestCompression: true,
      ...(requestId ? { generateUniqueId: () => requestId } : {}),
      callbackUrl: this.redirectUri(callbackUrl),
      entryPoint: configString(this.config, "ssoURL"),
      issuer: this.audience(callbackUrl),
      audience: this.audience(callbackUrl),
      idpCert: idpCert.length > 0 ? idpCert : ["-"],
      identifierFormat: nameIdFormat(configString(this.config, "nameIDPolicyFormat")),
      authnRequestBinding: "HTTP-POST",
      disableRequestedAuthnContext: true,
      wantAssertionsSigned: false,
      wantAuthnResponseSigned: false,
      validateInResponseTo: "always",
      requestIdExpirationPeriodMs: REQUEST_TTL_MS,
      cacheProvider: this.requestIds,
      acceptedClockSkewMs: SKEW_MS,
    });
  }

  async start(input: StartInput): Promise<LoginStart> {
    // An XML ID must not start with a digit.
    const requestId = `_${randomBytes(20).toString("hex")}`;
    const saml = this.saml(input.callbackUrl, this.certificates, requestId);
    const message = await saml.getAuthorizeMessageAsync(input.state);
    return {
      type: "form",
      action: configString(this.config, "ssoURL") ?? "",
      fields: { SAMLRequest: String(message.SAMLRequest), RelayState: input.state },
      state: { requestId },
    };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const encoded = input.params.SAMLResponse;
    if (!encoded) throw new SsoFailure("the callback carries no SAMLResponse");
    const xml = Buffer.from(encoded, "base64").toString("utf8");
    const doc = parseXml(xml);
    const response = doc.documentElement;
    if (response.localName !== "Response" || response.namespaceURI !== "urn:oasis:names:tc:SAML:2.0:protocol") {
      throw new SsoFailure("the SAML message is not a Response");
    }
    const status = text("samlp:Status/samlp:StatusCode/@Value", response);
    if (status !== SUCCESS) {
      throw new SsoFailure(`the identity provider answered status ${status ?? "(none)"}, not Success`);
    }
    let assertion: Element;
    if (this.skipSignature) {
      const found = nodes("saml:Assertion", response);
      if (found.length !== 1) throw new SsoFailure("the SAML response must hold exactly one Assertion");
      assertion = found[0];
    } else {
      // Saved by start() in this connector; put it back for node-saml's own InResponseTo check.
      const trusted = [...this.certificates, ...(await this.chainedCertificates(doc))];
      const saml = this.saml(input.callbackUrl, trusted);
      await this.requestIds.saveAsync(input.state.requestId ?? "", new Date().toISOString());
      let signedXml: string;
      try {
        const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: encoded });
        if (!profile) throw new SsoFailure("the SAML response holds no assertion");
        signedXml = profile.getAssertionXml?.() ?? "";
      } catch (error) {
        if (error instanceof SsoFailure) throw error;
        throw new SsoFailure(`the SAML response was refused: ${(error as Error).message}`);
      }
      assertion = parseXml(signedXml).documentElement;
    }
    const { id, keepUntil } = this.checkAssertion(response, assertion, input);
    // Last: only an assertion that passed every check takes its ID (on every replica, until it expires).
    if (!(await this.seen.add(`${this.id}/${id}`, keepUntil))) {
      throw new SsoFailure("this SAML assertion was already used (replay)");
    }
    return this.identity(assertion);
  }

  /** Certificates in the response's KeyInfo that a configured CA signed and that are valid now. */
  private async chainedCertificates(doc: Document): Promise<string[]> {
    const out: string[] = [];
    const values = (select("//*[local-name()='X509Certificate']/text()", doc) as Node[]).map((n) =>
      String(n.nodeValue).replace(/\s+/g, ""),
    );
    const now = new Date();
    // Loaded with the first response that carries certificates, like the SAML libraries (certificate-authority.ts).
    const { x509 } = await import("../../pki/x509.ts");
    for (const value of values.slice(0, 4)) {
      let cert: X509.X509Certificate;
      try {
        cert = new x509.X509Certificate(Buffer.from(value, "base64"));
      } catch {
        continue;
      }
      if (cert.notBefore > now || cert.notAfter < now) continue;
      for (const pem of this.certificates) {
        const ca = new x509.X509Certificate(pem);
        if (ca.subject !== cert.issuer) continue;
        if (await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }).catch(() => false)) {
          out.push(cert.toString("pem"));
        }
      }
    }
    return out;
  }

  /** The platform's checks of the signed assertion; resolves to its ID and how long a replay must be refused. */
  private checkAssertion(
    response: Element,
    assertion: Element,
    input: CallbackInput,
  ): { id: string; keepUntil: number } {
    const now = Date.now();
    const redirectUri = this.redirectUri(input.callbackUrl);
    const requestId = input.state.requestId;
    const destination = response.getAttribute("Destination");
    if (destination && destination !== redirectUri) {
      throw new SsoFailure(`the SAML response's Destination ${destination} is not ${redirectUri}`);
    }
    if (response.getAttribute("InResponseTo") !== requestId) {
      throw new SsoFailure("the SAML response does not answer the request this login sent (InResponseTo)");
    }
    const ssoIssuer = configString(this.config, "ssoIssuer");
    if (ssoIssuer) {
      const issuers = [text("saml:Issuer", assertion), text("saml:Issuer", response)].filter((i) => i !== undefined);
      if (issuers.length === 0 || issuers.some((issuer) => issuer !== ssoIssuer)) {
        throw new SsoFailure(`the SAML response was not issued by ${ssoIssuer} (ssoIssuer)`);
      }
    }
    const time = (value: string | null | undefined) => (value ? Date.parse(value) : Number.NaN);
    const bearer = nodes("saml:Subject/saml:SubjectConfirmation", assertion).find((confirmation) => {
      if (confirmation.getAttribute("Method") !== BEARER) return false;
      const data = nodes("saml:SubjectConfirmationData", confirmation)[0];
      if (!data || data.getAttribute("Recipient") !== redirectUri) return false;
      const notOnOrAfter = time(data.getAttribute("NotOnOrAfter"));
      if (!(notOnOrAfter + SKEW_MS > now)) return false;
      const inResponseTo = data.getAttribute("InResponseTo");
      return !inResponseTo || inResponseTo === requestId;
    });
    if (!bearer) {
      throw new SsoFailure(
        `the SAML assertion has no valid bearer SubjectConfirmation for ${redirectUri} (Recipient, NotOnOrAfter)`,
      );
    }
    const conditions = nodes("saml:Conditions", assertion)[0];
    const notBefore = time(conditions?.getAttribute("NotBefore"));
    const notOnOrAfter = time(conditions?.getAttribute("NotOnOrAfter"));
    if (!Number.isNaN(notBefore) && notBefore - SKEW_MS > now)
      throw new SsoFailure("the SAML assertion is not valid yet");
    if (!Number.isNaN(notOnOrAfter) && notOnOrAfter + SKEW_MS <= now)
      throw new SsoFailure("the SAML assertion has expired");
    const audience = this.audience(input.callbackUrl);
    const audiences = conditions
      ? nodes("saml:AudienceRestriction/saml:Audience", conditions).map((a) => a.textContent?.trim())
      : [];
    if (!audiences.includes(audience))
      throw new SsoFailure(`the SAML assertion is not meant for ${audience} (Audience)`);
    const id = assertion.getAttribute("ID");
    if (!id) throw new SsoFailure("the SAML assertion has no ID");
    const keepUntil = Number.isNaN(notOnOrAfter) ? now + REQUEST_TTL_MS : notOnOrAfter + SKEW_MS;
    return { id, keepUntil };
  }

  /**
   * The person is (the IdP's entity id, a persistent NameID): every other NameID format is refused, since an
   * e-mail address, an unspecified or a transient value is not a stable identity of its own. Attributes (username,
   * e-mail, groups) are profile data; a SAML e-mail is never counted as verified.
   */
  private identity(assertion: Element): SsoIdentity {
    const nameIdElement = nodes("saml:Subject/saml:NameID", assertion)[0];
    const nameId = nameIdElement?.textContent?.trim();
    if (!nameIdElement || !nameId) throw new SsoFailure("the SAML assertion has no NameID");
    const format = nameIdElement.getAttribute("Format") || undefined;
    if (format !== NAME_ID_FORMATS.persistent) {
      throw new SsoRefusal(
        "nameIDPolicyFormat",
        `the identity provider sent a NameID of format ${format ?? "(none, which means unspecified)"}; only a persistent NameID identifies a person here: configure the identity provider to send persistent NameIDs`,
      );
    }
    const entityId = text("saml:Issuer", assertion)?.trim();
    if (!entityId || /[|\s]/.test(entityId)) {
      throw new SsoFailure("the SAML assertion has no Issuer (entity id) without spaces or '|'");
    }
    const attribute = (name: string | undefined): string[] =>
      name
        ? nodes("saml:AttributeStatement/saml:Attribute", assertion)
            .filter((a) => a.getAttribute("Name") === name)
            .flatMap((a) => nodes("saml:AttributeValue", a).map((v) => (v.textContent ?? "").trim()))
        : [];
    const usernameAttr = configString(this.config, "usernameAttr");
    const username = attribute(usernameAttr)[0];
    if (usernameAttr && !username)
      throw new SsoFailure(`the SAML assertion has no ${usernameAttr} attribute (usernameAttr)`);
    const emailAttr = configString(this.config, "emailAttr");
    const email = attribute(emailAttr)[0];
    if (emailAttr && !email) throw new SsoFailure(`the SAML assertion has no ${emailAttr} attribute (emailAttr)`);
    let groups = attribute(configString(this.config, "groupsAttr"));
    const delimiter = configString(this.config, "groupsDelim");
    if (delimiter) groups = groups.flatMap((value) => value.split(delimiter)).map((g) => g.trim());
    groups = groups.filter((g) => g !== "");
    const allowed = configStrings(this.config, "allowedGroups");
    if (allowed.length > 0) {
      if (!groups.some((group) => allowed.includes(group))) {
        throw notInGroups("saml allowedGroups", allowed);
      }
      if (this.config.filterGroups === true) groups = groups.filter((group) => allowed.includes(group));
    }
    return { userId: `${entityId}|${nameId}`, username: username ?? nameId, email, emailVerified: false, groups };
  }
}
