// The child process that makes the platform's own CA with its first serving certificate, or a serving certificate
// signed by that CA (certificates-in-child.ts): it reads one job as JSON from its standard input, writes the result as
// JSON to its standard output and ends, and the x509 library it loaded ends with it.

import { text } from "node:stream/consumers";
import { createCertificateAuthority, issueCertificate } from "./certificate-authority.ts";
import type { CertificateJob, CertificateJobResult } from "./certificates-in-child.ts";

async function perform(job: CertificateJob): Promise<CertificateJobResult> {
  switch (job.kind) {
    case "issue":
      return issueCertificate(job.options);
    case "ca-and-issue": {
      const ca = await createCertificateAuthority(job.options.ca);
      return { ca, issued: await issueCertificate({ ...job.options.issue, ca }) };
    }
  }
}

const job = JSON.parse(await text(process.stdin)) as CertificateJob;
process.stdout.write(JSON.stringify(await perform(job)));
