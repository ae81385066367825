// A SAML identity provider for tests, on loopback HTTPS: POST /sso takes an AuthnRequest (HTTP-POST binding) and
// answers a page that posts a signed Response (xml-crypto, RSA-SHA256, exclusive c14n) to the request's
// AssertionConsumerServiceURL. What it signs and what it says can be bent per login to test every refusal.

import { randomBytes, webcrypto } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { SignedXml } from "xml-crypto";
import { x509 } from "../../src/pki/x509.ts";
import { type TestTls, testTls } from "./test-ca.ts";

export interface SamlUser {
  nameId: string;
  /** The NameID's Format attribute (default persistent); null leaves the attribute out. */
  nameIdFormat?: string | null;
  attributes: Record<string, string[]>;
}

/** How the next responses deviate from a correct one. */
export interface SamlBehaviour {
  sign: "response" | "assertion" | "both" | "none";
  /** Sign with a key the platform does not trust. */
  wrongKey?: boolean;
  /** Sign with a key whose certificate `caCertPem` issued (sent in KeyInfo). */
  chained?: boolean;
  audience?: string;
  destination?: string;
  recipient?: string;
  issuer?: string;
  /** Conditions and SubjectConfirmationData end this many ms from now (negative: already expired). */
  validForMs?: number;
  /** Use this assertion ID instead of a fresh one. */
  assertionId?: string;
  /** Change an attribute after signing. */
  tamper?: boolean;
}

export interface SamlTestIdp {
  ssoUrl: string;
  issuer: string;
  tls: TestTls;
  /** PEM of the signing certificate (what the platform's caData holds, base64-encoded). */
  signingCertPem: string;
  /** PEM of a CA that issued the certificate of `behaviour.chained` signatures. */
  caCertPem: string;
  user: SamlUser;
  behaviour: SamlBehaviour;
  /** The last AuthnRequest received, decoded. */
  lastRequest?: string;
  /** The last SAMLResponse sent (base64) and its RelayState. */
  lastResponse?: { SAMLResponse: string; RelayState: string; acs: string; assertionId: string };
  close(): Promise<void>;
}

interface Signer {
  certPem: string;
  keyPem: string;
  privateKey: webcrypto.CryptoKey;
}

/** An RSA key and its certificate: self-signed, or issued by `issuer` (a CA). */
async function rsaSigner(commonName: string, issuer?: Signer, ca = false): Promise<Signer> {
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const common = {
    serialNumber: randomBytes(8)
      .toString("hex")
      .replace(/^[89a-f]/, "1"),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: algorithm,
    extensions: ca ? [new x509.BasicConstraintsExtension(true, undefined, true)] : [],
  };
  const cert = issuer
    ? await x509.X509CertificateGenerator.create({
        ...common,
        subject: `CN=${commonName}`,
        issuer: new x509.X509Certificate(issuer.certPem).subject,
        publicKey: keys.publicKey as never,
        signingKey: issuer.privateKey as never,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({
        ...common,
        name: `CN=${commonName}`,
        keys: keys as never,
      });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return { certPem: cert.toString("pem"), keyPem, privateKey: keys.privateKey };
}

const xmlEscape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function sign(xml: string, element: "Response" | "Assertion", signer: Signer): string {
  const signature = new SignedXml({
    privateKey: signer.keyPem,
    publicCert: signer.certPem,
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  signature.addReference({
    xpath: `//*[local-name(.)='${element}']`,
    transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
  });
  signature.computeSignature(xml, {
    prefix: "ds",
    location: { reference: `//*[local-name(.)='${element}']/*[local-name(.)='Issuer']`, action: "after" },
  });
  return signature.getSignedXml();
}

export async function startSamlTestIdp(): Promise<SamlTestIdp> {
  const tls = await testTls("saml idp");
  const signer = await rsaSigner("saml test idp");
  const stranger = await rsaSigner("someone else");
  const ca = await rsaSigner("saml test ca", undefined, true);
  const chained = await rsaSigner("saml test idp (issued by the ca)", ca);
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: SamlTestIdp = {
    ssoUrl: `${origin}/sso`,
    issuer: `${origin}/metadata`,
    tls,
    signingCertPem: signer.certPem,
    caCertPem: ca.certPem,
    user: { nameId: "saml-user", attributes: {} },
    behaviour: { sign: "assertion" },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const respond = (request: string, relayState: string) => {
    const requestId = /\sID="([^"]+)"/.exec(request)?.[1] ?? "";
    const acs = /AssertionConsumerServiceURL="([^"]+)"/.exec(request)?.[1] ?? "";
    const audience = /<saml:Issuer[^>]*>([^<]+)<\/saml:Issuer>/.exec(request)?.[1] ?? "";
    const b = idp.behaviour;
    const now = Date.now();
    const until = iso(now + (b.validForMs ?? 5 * 60_000));
    const issuer = b.issuer ?? idp.issuer;
    const assertionId = b.assertionId ?? `_a${randomBytes(16).toString("hex")}`;
    const format =
      idp.user.nameIdFormat === undefined
        ? "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
        : idp.user.nameIdFormat;
    const nameIdFormat = format === null ? "" : ` Format="${xmlEscape(format)}"`;
    const attributes = Object.entries(idp.user.attributes)
      .map(
        ([name, values]) =>
          `<saml:Attribute Name="${xmlEscape(name)}">${values.map((v) => `<saml:AttributeValue>${xmlEscape(v)}</saml:AttributeValue>`).join("")}</saml:Attribute>`,
      )
      .join("");
    const assertion = `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${iso(now)}"><saml:Issuer>${xmlEscape(issuer)}</saml:Issuer><saml:Subject><saml:NameID${nameIdFormat}>${xmlEscape(idp.user.nameId)}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${requestId}" NotOnOrAfter="${until}" Recipient="${xmlEscape(b.recipient ?? acs)}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${iso(now - 60_000)}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${xmlEscape(b.audience ?? audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="_s${randomBytes(8).toString("hex")}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement><saml:AttributeStatement>${attributes}</saml:AttributeStatement></saml:Assertion>`;
    const key = b.wrongKey ? stranger : b.chained ? chained : signer;
    const signedAssertion = b.sign === "assertion" || b.sign === "both" ? sign(assertion, "Assertion", key) : assertion;
    let response = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(16).toString("hex")}" Version="2.0" IssueInstant="${iso(now)}" Destination="${xmlEscape(b.destination ?? acs)}" InResponseTo="${requestId}"><saml:Issuer>${xmlEscape(issuer)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${signedAssertion}</samlp:Response>`;
    if (b.sign === "response" || b.sign === "both") response = sign(response, "Response", key);
    if (b.tamper)
      response = response.replace(
        /<saml:AttributeValue>([^<]*)<\/saml:AttributeValue>/,
        "<saml:AttributeValue>admins</saml:AttributeValue>",
      );
    const SAMLResponse = Buffer.from(response).toString("base64");
    idp.lastResponse = { SAMLResponse, RelayState: relayState, acs, assertionId };
    return `<!doctype html><html><body><form method="post" action="${xmlEscape(acs)}"><input type="hidden" name="SAMLResponse" value="${SAMLResponse}"><input type="hidden" name="RelayState" value="${xmlEscape(relayState)}"></form></body></html>`;
  };

  server.on("request", (req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const form = new URLSearchParams(body);
      if (req.method !== "POST" || req.url !== "/sso" || !form.get("SAMLRequest")) {
        res.writeHead(400).end("expected a POSTed SAMLRequest");
        return;
      }
      const request = Buffer.from(form.get("SAMLRequest")!, "base64").toString("utf8");
      idp.lastRequest = request;
      res.writeHead(200, { "content-type": "text/html" }).end(respond(request, form.get("RelayState") ?? ""));
    });
  });
  return idp;
}
