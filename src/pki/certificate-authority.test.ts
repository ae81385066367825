import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as tls from "node:tls";
import { promisify } from "node:util";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  describeCertificate,
  issueCertificate,
} from "./certificate-authority.ts";

const run = promisify(execFile);

async function openssl(args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run("openssl", args);
    return stdout;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Starts a TLS server, runs `fn` with its port, always closes it. */
async function withTlsServer(
  options: tls.TlsOptions,
  host: string,
  fn: (port: number, server: tls.Server) => Promise<void>,
): Promise<void> {
  const server = tls.createServer(options, (socket) => socket.end("hello"));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  try {
    await fn((server.address() as AddressInfo).port, server);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Connects and reads the greeting; rejects with the TLS verification error if any. */
function connect(options: tls.ConnectionOptions): Promise<{ data: string; socket: tls.TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(options);
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      data += chunk;
    });
    socket.on("end", () => resolve({ data, socket }));
    socket.on("error", reject);
  });
}

describe("certificate authority", () => {
  let ca: CertificateAuthority;
  let server: { certPem: string; keyPem?: string };
  let dir: string;

  before(async () => {
    ca = await createCertificateAuthority({ commonName: "test-ca" });
    server = await issueCertificate({
      ca,
      commonName: "platform",
      dnsNames: ["localhost", "api.example.test"],
      ipAddresses: ["127.0.0.1", "::1"],
      usage: "server",
      validitySeconds: 3600,
    });
    dir = await mkdtemp(join(tmpdir(), "pki-test-"));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("createCertificateAuthority() makes a self-signed ECDSA P-256 CA with a PKCS#8 key", async () => {
    const cert = new X509Certificate(ca.certPem);
    assert.equal(cert.ca, true);
    assert.ok(cert.checkIssued(cert));
    assert.ok(cert.verify(cert.publicKey));
    assert.ok(ca.keyPem.startsWith("-----BEGIN PRIVATE KEY-----\n"));
    const key = createPrivateKey(ca.keyPem);
    assert.equal(key.asymmetricKeyType, "ec");
    assert.equal(key.asymmetricKeyDetails?.namedCurve, "prime256v1");
    assert.ok(cert.checkPrivateKey(key));
    const described = await describeCertificate(ca.certPem);
    assert.equal(described.commonName, "test-ca");
    assert.equal(described.subject, "CN=test-ca");
    assert.equal(described.issuer, "CN=test-ca");
    const years = (described.notAfter.getTime() - described.notBefore.getTime()) / (365 * 86_400_000);
    assert.ok(years > 9.9 && years < 10.1, `validity ${years} years`);
  });

  it("createCertificateAuthority() honours validityDays", () => {
    return createCertificateAuthority({ commonName: "short", validityDays: 2 }).then(async (short) => {
      const { notBefore, notAfter } = await describeCertificate(short.certPem);
      const days = (notAfter.getTime() - notBefore.getTime()) / 86_400_000;
      assert.ok(days > 2 && days < 2.01, `validity ${days} days`);
    });
  });

  it("issueCertificate() signs a server certificate with SANs, a backdated start and a matching key", async () => {
    const cert = new X509Certificate(server.certPem);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(cert.ca, false);
    assert.ok(cert.checkIssued(caCert));
    assert.ok(cert.verify(caCert.publicKey));
    assert.ok(server.keyPem);
    assert.ok(cert.checkPrivateKey(createPrivateKey(server.keyPem)));
    assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
    const described = await describeCertificate(server.certPem);
    assert.equal(described.commonName, "platform");
    assert.equal(described.issuer, "CN=test-ca");
    assert.deepEqual(described.dnsNames, ["localhost", "api.example.test"]);
    assert.deepEqual(described.ipAddresses, ["127.0.0.1", "::1"]);
    const skewMs = Date.now() - described.notBefore.getTime();
    assert.ok(skewMs >= 59_000, `notBefore only ${skewMs} ms in the past`);
    assert.equal(described.notAfter.getTime() - described.notBefore.getTime(), 3_660_000);
    assert.notEqual(cert.serialNumber, new X509Certificate(ca.certPem).serialNumber);
    assert.ok(!/^[89A-F]/.test(cert.serialNumber), "serial must be positive");
  });

  it("issueCertificate() puts organizations in the subject of client certificates", async () => {
    const client = await issueCertificate({
      ca,
      commonName: "alice",
      organizations: ["system:masters", "team-a"],
      usage: "client",
      validitySeconds: 600,
    });
    const described = await describeCertificate(client.certPem);
    assert.equal(described.commonName, "alice");
    assert.deepEqual(described.organizations, ["system:masters", "team-a"]);
    assert.deepEqual(described.dnsNames, []);
    assert.deepEqual(new X509Certificate(client.certPem).keyUsage, ["1.3.6.1.5.5.7.3.2"]);
  });

  it("issueCertificate() signs someone else's public key and returns no key", async () => {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const issued = await issueCertificate({
      ca,
      commonName: "bob",
      usage: "client",
      validitySeconds: 600,
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    });
    assert.equal(issued.keyPem, undefined);
    const cert = new X509Certificate(issued.certPem);
    assert.ok(cert.publicKey.equals(publicKey));
    assert.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
  });

  it("issueCertificate() signs with an RSA CA key in PKCS#1 form, as a user-provided CA may have", async (t) => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    const keyFile = join(dir, "rsa-ca.key");
    const certFile = join(dir, "rsa-ca.crt");
    await writeFile(keyFile, keyPem);
    const created = await openssl([
      "req",
      "-x509",
      "-key",
      keyFile,
      "-subj",
      "/CN=rsa-ca",
      "-days",
      "1",
      "-out",
      certFile,
    ]);
    if (created === undefined) {
      t.skip("openssl not found: cannot make an RSA CA");
      return;
    }
    const rsaCa = { certPem: await readFile(certFile, "utf8"), keyPem };
    const issued = await issueCertificate({
      ca: rsaCa,
      commonName: "svc",
      dnsNames: ["svc"],
      usage: "server",
      validitySeconds: 60,
    });
    const cert = new X509Certificate(issued.certPem);
    assert.ok(cert.verify(new X509Certificate(rsaCa.certPem).publicKey));
    assert.equal((await describeCertificate(issued.certPem)).issuer, "CN=rsa-ca");
  });

  it("issueCertificate() rejects malformed IP addresses", async () => {
    await assert.rejects(
      issueCertificate({ ca, commonName: "x", ipAddresses: ["300.1.1.1"], usage: "server", validitySeconds: 60 }),
      /not an IP address: 300\.1\.1\.1/,
    );
  });

  it("describeCertificate() reads the first certificate of a bundle", async () => {
    const described = await describeCertificate(`${server.certPem}${ca.certPem}`);
    assert.equal(described.commonName, "platform");
    await assert.rejects(describeCertificate("nothing here"), /no PEM certificate/);
  });

  it("issueCertificate() serves node:tls verified against the CA over IPv4", async () => {
    await withTlsServer({ cert: server.certPem, key: server.keyPem }, "127.0.0.1", async (port) => {
      const { data, socket } = await connect({ host: "127.0.0.1", port, ca: ca.certPem });
      assert.equal(data, "hello");
      assert.equal(socket.authorized, true);
    });
  });

  it("issueCertificate() serves node:tls verified by DNS name via servername", async () => {
    await withTlsServer({ cert: server.certPem, key: server.keyPem }, "127.0.0.1", async (port) => {
      const ok = await connect({ host: "127.0.0.1", port, servername: "api.example.test", ca: ca.certPem });
      assert.equal(ok.data, "hello");
      await assert.rejects(connect({ host: "127.0.0.1", port, servername: "other.example.test", ca: ca.certPem }), {
        code: "ERR_TLS_CERT_ALTNAME_INVALID",
      });
      const stranger = await createCertificateAuthority({ commonName: "stranger" });
      await assert.rejects(connect({ host: "127.0.0.1", port, ca: stranger.certPem }), {
        code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      });
    });
  });

  it("issueCertificate() serves node:tls over IPv6 ::1", async (t) => {
    try {
      await withTlsServer({ cert: server.certPem, key: server.keyPem }, "::1", async (port) => {
        const { data, socket } = await connect({ host: "::1", port, ca: ca.certPem });
        assert.equal(data, "hello");
        assert.equal(socket.authorized, true);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EADDRNOTAVAIL" && code !== "EAFNOSUPPORT") throw error;
      t.skip(`IPv6 loopback unavailable (${code})`);
    }
  });

  it("issueCertificate() client certificates authenticate to a server requiring them", async () => {
    const client = await issueCertificate({
      ca,
      commonName: "alice",
      organizations: ["devs"],
      usage: "client",
      validitySeconds: 600,
    });
    const options = {
      cert: server.certPem,
      key: server.keyPem,
      ca: ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    };
    await withTlsServer(options, "127.0.0.1", async (port, tlsServer) => {
      const peer = new Promise<tls.PeerCertificate>((resolve) =>
        tlsServer.once("secureConnection", (socket) => resolve(socket.getPeerCertificate())),
      );
      await connect({ host: "127.0.0.1", port, ca: ca.certPem, cert: client.certPem, key: client.keyPem });
      const subject = (await peer).subject;
      assert.equal(subject.CN, "alice");
      assert.equal(subject.O, "devs");
    });
  });

  it("issueCertificate() output passes openssl x509 -text and openssl verify", async (t) => {
    const caFile = join(dir, "ca.crt");
    const certFile = join(dir, "serving.crt");
    await writeFile(caFile, ca.certPem);
    await writeFile(certFile, server.certPem);
    const caText = await openssl(["x509", "-noout", "-text", "-in", caFile]);
    if (caText === undefined) {
      t.skip("openssl not found: skipping the openssl cross-check");
      return;
    }
    assert.match(caText, /CA:TRUE/);
    assert.match(caText, /Certificate Sign/);
    assert.match(caText, /ecdsa-with-SHA256/);
    const text = (await openssl(["x509", "-noout", "-text", "-in", certFile])) ?? "";
    assert.match(text, /CA:FALSE/);
    assert.match(text, /TLS Web Server Authentication/);
    assert.match(text, /DNS:localhost, DNS:api\.example\.test, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/);
    assert.match(text, /Subject: CN ?= ?platform/);
    assert.match(text, /X509v3 Authority Key Identifier/);
    const verified = await openssl(["verify", "-CAfile", caFile, certFile]);
    assert.match(verified ?? "", /: OK/);
  });
});
