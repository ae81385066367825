// A throwaway CA and a 127.0.0.1 / localhost serving certificate for the test identity providers.

import { createCertificateAuthority, issueCertificate } from "../../src/pki/certificate-authority.ts";

export interface TestTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export async function testTls(name = "test identity provider"): Promise<TestTls> {
  const ca = await createCertificateAuthority({ commonName: `${name} CA`, validityDays: 1 });
  const served = await issueCertificate({
    ca,
    commonName: name,
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
    validitySeconds: 86_400,
  });
  return { caPem: ca.certPem, certPem: served.certPem, keyPem: served.keyPem! };
}
