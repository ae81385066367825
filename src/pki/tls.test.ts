import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { promisify } from "node:util";
import { describeCertificate, issueCertificate } from "./certificate-authority.ts";
import { ensureServingCertificates, loadUserCertificates } from "./tls.ts";

const run = promisify(execFile);

describe("tls", () => {
  let dataDir: string;
  const pki = (file: string) => join(dataDir, "pki", file);
  const mode = async (path: string) => (await stat(path)).mode & 0o777;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tls-test-"));
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("ensureServingCertificates() creates the CA and serving pair with private modes on first start", async () => {
    const result = await ensureServingCertificates({ dataDir, hosts: ["platform.example.com", "10.0.0.5"] });
    assert.equal(await mode(join(dataDir, "pki")), 0o700);
    assert.equal(await mode(pki("ca.key")), 0o600);
    assert.equal(await mode(pki("serving.key")), 0o600);
    assert.equal(await readFile(pki("ca.crt"), "utf8"), result.caPem);
    assert.equal(await readFile(pki("ca.key"), "utf8"), result.caKeyPem);
    assert.equal(await readFile(pki("serving.crt"), "utf8"), result.certPem);
    assert.equal(await readFile(pki("serving.key"), "utf8"), result.keyPem);
    const serving = await describeCertificate(result.certPem);
    assert.deepEqual(serving.dnsNames, ["localhost", "platform.example.com"]);
    assert.deepEqual(serving.ipAddresses, ["127.0.0.1", "::1", "10.0.0.5"]);
    assert.equal(serving.issuer, (await describeCertificate(result.caPem)).subject);
    assert.ok(new X509Certificate(result.certPem).verify(new X509Certificate(result.caPem).publicKey));
  });

  it("ensureServingCertificates() sorts hosts into DNS names and IPs and skips bind-all addresses", async () => {
    const hosts = [
      "0.0.0.0",
      "::",
      "[fd00::1]:8443",
      "Api.Example.com.",
      "api.example.com:443",
      "https://10.1.2.3:9443/x",
    ];
    const { certPem } = await ensureServingCertificates({ dataDir, hosts });
    const serving = await describeCertificate(certPem);
    assert.deepEqual(serving.dnsNames, ["localhost", "api.example.com"]);
    assert.deepEqual(serving.ipAddresses, ["127.0.0.1", "::1", "fd00::1", "10.1.2.3"]);
  });

  it("ensureServingCertificates() reuses everything on a later start", async () => {
    const first = await ensureServingCertificates({ dataDir, hosts: ["platform.example.com"] });
    await chmod(pki("serving.key"), 0o644);
    const second = await ensureServingCertificates({ dataDir, hosts: ["PLATFORM.example.com"] });
    assert.deepEqual(second, first);
    assert.equal(await mode(pki("serving.key")), 0o600);
  });

  it("ensureServingCertificates() reissues only the serving certificate for a new host", async () => {
    const first = await ensureServingCertificates({ dataDir, hosts: [] });
    const second = await ensureServingCertificates({ dataDir, hosts: ["new.example.com", "192.168.1.9"] });
    assert.equal(second.caPem, first.caPem);
    assert.equal(second.caKeyPem, first.caKeyPem);
    assert.notEqual(second.certPem, first.certPem);
    const serving = await describeCertificate(second.certPem);
    assert.ok(serving.dnsNames.includes("new.example.com"));
    assert.ok(serving.ipAddresses.includes("192.168.1.9"));
  });

  it("ensureServingCertificates() reissues a serving certificate expiring within 30 days", async () => {
    const first = await ensureServingCertificates({ dataDir, hosts: [] });
    const ca = { certPem: first.caPem, keyPem: first.caKeyPem };
    const expiring = await issueCertificate({
      ca,
      commonName: "old",
      dnsNames: ["localhost"],
      ipAddresses: ["127.0.0.1", "::1"],
      usage: "server",
      validitySeconds: 20 * 86_400,
    });
    await writeFile(pki("serving.crt"), expiring.certPem);
    await writeFile(pki("serving.key"), expiring.keyPem ?? "");
    const renewed = await ensureServingCertificates({ dataDir, hosts: [] });
    assert.equal(renewed.caPem, first.caPem);
    assert.notEqual(renewed.certPem, expiring.certPem);
    const days = ((await describeCertificate(renewed.certPem)).notAfter.getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 300, `renewed for ${days} days`);
  });

  it("ensureServingCertificates() replaces a serving pair whose key does not match or that another CA signed", async () => {
    const first = await ensureServingCertificates({ dataDir, hosts: [] });
    const other = await mkdtemp(join(tmpdir(), "tls-other-"));
    try {
      const foreign = await ensureServingCertificates({ dataDir: other, hosts: [] });
      await writeFile(pki("serving.key"), foreign.keyPem);
      const afterMismatch = await ensureServingCertificates({ dataDir, hosts: [] });
      assert.notEqual(afterMismatch.certPem, first.certPem);
      assert.ok(new X509Certificate(afterMismatch.certPem).checkPrivateKey(createPrivateKey(afterMismatch.keyPem)));
      await writeFile(pki("serving.crt"), foreign.certPem);
      await writeFile(pki("serving.key"), foreign.keyPem);
      const afterForeign = await ensureServingCertificates({ dataDir, hosts: [] });
      assert.notEqual(afterForeign.certPem, foreign.certPem);
      assert.ok(new X509Certificate(afterForeign.certPem).verify(new X509Certificate(first.caPem).publicKey));
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it("ensureServingCertificates() refuses to replace half a CA", async () => {
    await ensureServingCertificates({ dataDir, hosts: [] });
    await unlink(pki("ca.key"));
    await assert.rejects(
      ensureServingCertificates({ dataDir, hosts: [] }),
      /ca\.key is missing: restore it, or remove .*ca\.crt/,
    );
  });

  it("ensureServingCertificates() files pass openssl verify", async (t) => {
    await ensureServingCertificates({ dataDir, hosts: ["platform.example.com"] });
    let output: string;
    try {
      output = (await run("openssl", ["verify", "-CAfile", pki("ca.crt"), pki("serving.crt")])).stdout;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      t.skip("openssl not found: skipping the openssl cross-check");
      return;
    }
    assert.match(output, /serving\.crt: OK/);
    const text = (await run("openssl", ["x509", "-noout", "-text", "-in", pki("serving.crt")])).stdout;
    assert.match(
      text,
      /DNS:localhost, DNS:platform\.example\.com, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/,
    );
  });

  it("loadUserCertificates() returns a matching pair and rejects mismatches without echoing keys", async () => {
    const a = await ensureServingCertificates({ dataDir, hosts: [] });
    const certFile = join(dataDir, "user.crt");
    const keyFile = join(dataDir, "user.key");
    await writeFile(certFile, a.certPem + a.caPem);
    await writeFile(keyFile, a.keyPem);
    assert.deepEqual(await loadUserCertificates(certFile, keyFile), { certPem: a.certPem + a.caPem, keyPem: a.keyPem });

    await writeFile(keyFile, a.caKeyPem);
    await assert.rejects(loadUserCertificates(certFile, keyFile), (error: Error) => {
      assert.match(error.message, /the key in .*user\.key does not match the certificate in .*user\.crt/);
      assert.ok(!error.message.includes("PRIVATE KEY"));
      return true;
    });
    await writeFile(keyFile, "garbage");
    await assert.rejects(
      loadUserCertificates(certFile, keyFile),
      /user\.key holds no usable unencrypted PEM private key/,
    );
    await writeFile(certFile, "garbage");
    await assert.rejects(loadUserCertificates(certFile, keyFile), /user\.crt holds no valid PEM certificate/);
    await assert.rejects(loadUserCertificates(join(dataDir, "missing.crt"), keyFile), { code: "ENOENT" });
  });
});
