import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, it } from "node:test";
import { createCertificateAuthorityAndIssueInChild, issueCertificateInChild } from "./certificates-in-child.ts";

const serving = {
  commonName: "platform",
  dnsNames: ["localhost"],
  ipAddresses: ["127.0.0.1"],
  usage: "server" as const,
  validitySeconds: 600,
};

function assertSignedServing(issued: { certPem: string; keyPem?: string }, caCert: X509Certificate): void {
  const cert = new X509Certificate(issued.certPem);
  assert.ok(cert.verify(caCert.publicKey));
  assert.ok(cert.checkPrivateKey(createPrivateKey(issued.keyPem ?? "")));
  assert.equal(cert.checkHost("localhost", { subject: "never" }), "localhost");
  assert.equal(cert.checkIP("127.0.0.1"), "127.0.0.1");
}

describe("certificates made in a child process", () => {
  it("createCertificateAuthorityAndIssueInChild() answers a CA and a certificate it signed; issueCertificateInChild() signs with that CA", async () => {
    const { ca, issued } = await createCertificateAuthorityAndIssueInChild(
      { commonName: "child-ca", validityDays: 1 },
      serving,
    );
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(caCert.ca, true);
    assert.ok(caCert.checkPrivateKey(createPrivateKey(ca.keyPem)));
    assertSignedServing(issued, caCert);
    assertSignedServing(await issueCertificateInChild({ ca, ...serving }), caCert);
  });

  it("issueCertificateInChild() rejects with the child's reason, which never holds the CA's key", async () => {
    const { ca } = await createCertificateAuthorityAndIssueInChild(
      { commonName: "child-ca", validityDays: 1 },
      serving,
    );
    const error = await issueCertificateInChild({
      ca,
      commonName: "x",
      ipAddresses: ["300.1.1.1"],
      usage: "server",
      validitySeconds: 60,
    }).catch((e: Error) => e);
    assert.ok(error instanceof Error);
    assert.match(error.message, /^making a certificate failed: .*not an IP address: 300\.1\.1\.1/);
    const keyBody = ca.keyPem.split("\n")[1];
    assert.equal(error.message.includes(keyBody), false);
  });
});
