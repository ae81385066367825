// A small PKI for the platform: a self-signed CA, and server or client certificates it signs (ECDSA P-256 by
// default). Certificates follow what Go's crypto/x509 (kubectl, client-go) and node:tls require: positive random
// serials, SANs for host names (the CN is ignored), CA basic constraints and key usages, key identifiers.

import { createPrivateKey, randomBytes, webcrypto } from "node:crypto";
import { isIP } from "node:net";
import type * as X509 from "@peculiar/x509";

// @peculiar/x509 (with tsyringe, reflect-metadata and the asn1 schemas) holds about 6 MiB once loaded: it loads with
// the first certificate issued or described, not with the platform, which on a later start checks its certificates
// with node:crypto alone (tls.ts) (issue 36).
const x509Library = async (): Promise<typeof X509> => (await import("./x509.ts")).x509;

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  ca: CertificateAuthority;
  commonName: string;
  /** Subject O values: Kubernetes reads them as the client's groups. */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  /** "peer": both, as etcd members' certificates (its gateway presents the serving certificate as a client). */
  usage: "server" | "client" | "peer";
  validitySeconds: number;
  /** Sign this SPKI ("PUBLIC KEY") PEM instead of generating a key pair; then no keyPem is returned. */
  publicKeyPem?: string;
}

export interface CertificateDescription {
  subject: string;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  notAfter: Date;
  issuer: string;
}

const EC_P256 = { name: "ECDSA", namedCurve: "P-256" };
// Backdating absorbs clock differences between this host and its clients.
const CLOCK_SKEW_MS = 60_000;
const DAY_MS = 86_400_000;

export async function createCertificateAuthority(options: {
  commonName: string;
  validityDays?: number;
}): Promise<CertificateAuthority> {
  const x509 = await x509Library();
  const keys = (await webcrypto.subtle.generateKey(EC_P256, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [options.commonName] }],
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + (options.validityDays ?? 3650) * DAY_MS),
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: certificatePem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

export async function issueCertificate(options: IssueOptions): Promise<{ certPem: string; keyPem?: string }> {
  const x509 = await x509Library();
  const caCert = new x509.X509Certificate(options.ca.certPem);
  const signer = await importSigningKey(options.ca.keyPem);
  const generated = options.publicKeyPem
    ? undefined
    : ((await webcrypto.subtle.generateKey(EC_P256, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair);
  const foreignKey = options.publicKeyPem ? new x509.PublicKey(options.publicKeyPem) : undefined;
  const publicKey = generated?.publicKey ?? (foreignKey as X509.PublicKey);
  // RSA keys also encipher (TLS 1.2 RSA key exchange); EC and Ed25519 keys only sign.
  const rsa = /^RSA/i.test(foreignKey?.algorithm.name ?? "");

  const names: X509.JsonGeneralName[] = [
    ...(options.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value: stripBrackets(value) })),
  ];
  for (const name of names) {
    if (name.type === "ip" && isIP(name.value) === 0) throw new Error(`not an IP address: ${name.value}`);
  }
  const caKeyId = caCert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    // Go orders O before CN; each O is its own RDN so every group survives any parser.
    subject: [...(options.organizations ?? []).map((o) => ({ O: [o] })), { CN: [options.commonName] }],
    // The CA's own encoded name, so issuer and subject bytes match exactly (Go chains by raw bytes).
    issuer: caCert.subjectName,
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + options.validitySeconds * 1000),
    signingAlgorithm: signer.algorithm,
    publicKey,
    signingKey: signer.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | (rsa ? x509.KeyUsageFlags.keyEncipherment : 0),
        true,
      ),
      new x509.ExtendedKeyUsageExtension(
        options.usage === "peer"
          ? [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]
          : [options.usage === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
        false,
      ),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
      caKeyId
        ? new x509.AuthorityKeyIdentifierExtension(caKeyId)
        : await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  const certPem = certificatePem(cert);
  return generated ? { certPem, keyPem: await privateKeyPem(generated.privateKey) } : { certPem };
}

/** Reads the parts of a PEM certificate the platform shows or checks (the first certificate of a bundle). */
export async function describeCertificate(pem: string): Promise<CertificateDescription> {
  const x509 = await x509Library();
  const cert = new x509.X509Certificate(firstCertificate(pem));
  const names = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return {
    subject: cert.subject,
    commonName: cert.subjectName.getField("CN")[0] ?? "",
    organizations: cert.subjectName.getField("O"),
    dnsNames: names.filter((n) => n.type === "dns").map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === "ip").map((n) => n.value),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    issuer: cert.issuer,
  };
}

function firstCertificate(pem: string): string {
  const match = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (!match) throw new Error("no PEM certificate found");
  return match[0];
}

/** Imports a PEM private key (PKCS#8, SEC1 or PKCS#1) for signing, with the matching signature algorithm. */
async function importSigningKey(keyPem: string): Promise<{ key: webcrypto.CryptoKey; algorithm: webcrypto.Algorithm }> {
  const keyObject = createPrivateKey(keyPem);
  const der = keyObject.export({ type: "pkcs8", format: "der" });
  const subtle = webcrypto.subtle;
  switch (keyObject.asymmetricKeyType) {
    case "ec": {
      const curve = EC_CURVES[keyObject.asymmetricKeyDetails?.namedCurve ?? ""];
      if (!curve) throw new Error(`unsupported CA key curve ${keyObject.asymmetricKeyDetails?.namedCurve}`);
      const key = await subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: curve.name }, false, ["sign"]);
      return { key, algorithm: { name: "ECDSA", hash: curve.hash } as webcrypto.Algorithm };
    }
    case "rsa": {
      const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
      return { key: await subtle.importKey("pkcs8", der, algorithm, false, ["sign"]), algorithm };
    }
    case "ed25519":
      return {
        key: await subtle.importKey("pkcs8", der, { name: "Ed25519" }, false, ["sign"]),
        algorithm: { name: "Ed25519" },
      };
    default:
      throw new Error(`unsupported CA key type ${keyObject.asymmetricKeyType}`);
  }
}

const EC_CURVES: Record<string, { name: string; hash: string }> = {
  prime256v1: { name: "P-256", hash: "SHA-256" },
  secp384r1: { name: "P-384", hash: "SHA-384" },
  secp521r1: { name: "P-521", hash: "SHA-512" },
};

// Ends with a newline, so PEM files and bundles concatenate cleanly.
function certificatePem(cert: X509.X509Certificate): string {
  return `${cert.toString("pem").trimEnd()}\n`;
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
}

// 16 random bytes, top bit clear and second-highest set: positive, minimally encoded, never zero (RFC 5280 4.1.2.2).
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes.toString("hex");
}

function stripBrackets(ip: string): string {
  return ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
}
