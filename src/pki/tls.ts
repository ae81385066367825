// Serving certificates of the platform. Without --tls-cert/--tls-key the platform keeps its own CA in
// <dataDir>/pki and issues itself a serving certificate; kubeconfigs pin that CA, so the CA is created once and kept,
// while the serving certificate is reissued whenever it nears expiry or lacks a requested host.

import { createPrivateKey, randomBytes, X509Certificate } from "node:crypto";
import { access, chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import type { CertificateAuthority } from "./certificate-authority.ts";
import {
  createCertificateAuthorityAndIssueInChild,
  type IssuedCertificate,
  issueCertificateInChild,
} from "./certificates-in-child.ts";

export interface ServingCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
  caKeyPem: string;
}

const SERVING_VALIDITY_SECONDS = 365 * 86_400;
const RENEW_BEFORE_MS = 30 * 86_400_000;
const DEFAULT_DNS = ["localhost"];
const DEFAULT_IPS = ["127.0.0.1", "::1"];

/** Creates on first start, then reuses, `<dataDir>/pki/{ca.crt,ca.key,serving.crt,serving.key}`. */
export async function ensureServingCertificates(options: {
  dataDir: string;
  hosts: string[];
}): Promise<ServingCertificates> {
  const dir = join(options.dataDir, "pki");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const files = {
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    cert: join(dir, "serving.crt"),
    key: join(dir, "serving.key"),
  };
  const wanted = servingNames(options.hosts);
  const ca = await loadCa(files.caCert, files.caKey);
  if (!ca) {
    // A first start: the CA and the certificate it signs, made in one child process.
    const made = await createCertificateAuthorityAndIssueInChild(
      { commonName: `virtualcluster-platform-ca@${Math.floor(Date.now() / 1000)}` },
      servingIssue(wanted),
    );
    await writeAtomically(files.caKey, made.ca.keyPem, 0o600);
    await writeAtomically(files.caCert, made.ca.certPem, 0o600);
    return writeServing(files, made.ca, made.issued);
  }
  const current = await readPair(files.cert, files.key);
  if (current && servingCertificateFits(current, ca.certPem, wanted)) {
    await chmod(files.key, 0o600);
    return { caPem: ca.certPem, certPem: current.certPem, keyPem: current.keyPem, caKeyPem: ca.keyPem };
  }
  return writeServing(files, ca, await issueCertificateInChild({ ca, ...servingIssue(wanted) }));
}

const servingIssue = (wanted: ServingNames) => ({
  commonName: "virtualcluster-platform",
  dnsNames: wanted.dnsNames,
  ipAddresses: wanted.ipAddresses,
  usage: "server" as const,
  validitySeconds: SERVING_VALIDITY_SECONDS,
});

async function writeServing(
  files: { cert: string; key: string },
  ca: CertificateAuthority,
  issued: IssuedCertificate,
): Promise<ServingCertificates> {
  const keyPem = issued.keyPem as string;
  // Key first: a crash in between leaves a mismatched pair, which the next start detects and replaces.
  await writeAtomically(files.key, keyPem, 0o600);
  await writeAtomically(files.cert, issued.certPem, 0o600);
  return { caPem: ca.certPem, certPem: issued.certPem, keyPem, caKeyPem: ca.keyPem };
}

/** Reads the certificate (chain) and key given with --tls-cert/--tls-key, checking that they belong together. */
export async function loadUserCertificates(
  certFile: string,
  keyFile: string,
): Promise<{ certPem: string; keyPem: string }> {
  const read = (file: string, flag: string) =>
    readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      const message = `${flag} ${file}: cannot read the file (${error.code ?? error.message})`;
      throw Object.assign(new Error(message, { cause: error }), { code: error.code });
    });
  const certPem = await read(certFile, "--tls-cert");
  const keyPem = await read(keyFile, "--tls-key");
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (error) {
    throw new Error(`${certFile} holds no valid PEM certificate: ${(error as Error).message}`);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(keyPem);
  } catch (error) {
    // The key's content never goes into the message.
    throw new Error(`${keyFile} holds no usable unencrypted PEM private key: ${(error as Error).message}`);
  }
  if (!cert.checkPrivateKey(key))
    throw new Error(`the key in ${keyFile} does not match the certificate in ${certFile}`);
  if (new Date(cert.validTo).getTime() <= Date.now())
    throw new Error(`the certificate in ${certFile} expired on ${cert.validTo}`);
  return { certPem, keyPem };
}

/** The CA kept in the data directory, or undefined when there is none yet (half of one is an error). */
async function loadCa(certFile: string, keyFile: string): Promise<CertificateAuthority | undefined> {
  const existing = await readPair(certFile, keyFile);
  if (existing) {
    const cert = new X509Certificate(existing.certPem);
    if (!cert.ca) throw new Error(`${certFile} is not a CA certificate`);
    if (!cert.checkPrivateKey(createPrivateKey(existing.keyPem))) {
      throw new Error(`${keyFile} does not match ${certFile}`);
    }
    await chmod(keyFile, 0o600);
    return existing;
  }
  const [hasCert, hasKey] = await Promise.all([exists(certFile), exists(keyFile)]);
  // Replacing half a CA would silently invalidate every kubeconfig that trusts it: make the operator decide.
  if (hasCert || hasKey) {
    throw new Error(
      `${hasCert ? keyFile : certFile} is missing: restore it, or remove ${hasCert ? certFile : keyFile} to create a new CA`,
    );
  }
  return undefined;
}

interface ServingNames {
  dnsNames: string[];
  ipAddresses: string[];
}

function servingCertificateFits(
  pair: { certPem: string; keyPem: string },
  caPem: string,
  wanted: ServingNames,
): boolean {
  try {
    const cert = new X509Certificate(pair.certPem);
    const ca = new X509Certificate(caPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return false;
    if (cert.validToDate.getTime() - Date.now() < RENEW_BEFORE_MS) return false;
    // Names as the certificate's SANs hold them: DNS names exactly (no wildcard, not the subject's CN, any case) and
    // IP addresses by value; node:crypto checks both without loading the x509 library (certificate-authority.ts).
    const exactly = { wildcards: false, partialWildcards: false, subject: "never" } as const;
    return (
      wanted.dnsNames.every((name) => cert.checkHost(name, exactly) !== undefined) &&
      wanted.ipAddresses.every((ip) => cert.checkIP(ip) !== undefined)
    );
  } catch {
    return false;
  }
}

/** localhost, 127.0.0.1 and ::1 plus the hosts, each sorted into DNS names or IPs; bind-all addresses are skipped. */
function servingNames(hosts: string[]): ServingNames {
  const dnsNames = new Set(DEFAULT_DNS);
  const ipAddresses = new Set(DEFAULT_IPS);
  for (const raw of hosts) {
    const host = hostOnly(raw);
    if (!host) continue;
    if (isIP(host)) {
      const ip = canonicalIp(host);
      if (ip !== "0.0.0.0" && ip !== "::") ipAddresses.add(ip);
    } else {
      dnsNames.add(host.toLowerCase().replace(/\.$/, ""));
    }
  }
  return { dnsNames: [...dnsNames], ipAddresses: [...ipAddresses] };
}

// Accepts "name", "name:port", "1.2.3.4", "::1", "[::1]", "[::1]:443" and URLs.
function hostOnly(raw: string): string {
  let host = raw.trim();
  if (host.includes("://")) {
    try {
      host = new URL(host).hostname;
    } catch {
      return "";
    }
  }
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return bracketed[1];
  if (isIP(host)) return host;
  const withPort = /^([^:]+):\d+$/.exec(host);
  return withPort ? withPort[1] : host;
}

function canonicalIp(ip: string): string {
  // The URL parser prints IPv6 in its shortest form ("0:0:0:0:0:0:0:1" -> "[::1]").
  return isIP(ip) === 6 ? new URL(`http://[${ip}]`).hostname.slice(1, -1) : ip;
}

async function readPair(certFile: string, keyFile: string): Promise<{ certPem: string; keyPem: string } | undefined> {
  try {
    return { certPem: await readFile(certFile, "utf8"), keyPem: await readFile(keyFile, "utf8") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

// Write, flush and rename, so a crash never leaves a truncated certificate or key behind.
async function writeAtomically(file: string, content: string, mode: number): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(tmp, "wx", mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
