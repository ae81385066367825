// The child process that makes the platform's own CA or serving certificate (certificates-in-child.ts): it reads
// one job as JSON from its standard input, writes the result as JSON to its standard output and ends, and the x509
// library it loaded ends with it.

import { text } from "node:stream/consumers";
import { createCertificateAuthority, issueCertificate } from "./certificate-authority.ts";
import type { CertificateJob, CertificateJobResult } from "./certificates-in-child.ts";

const job = JSON.parse(await text(process.stdin)) as CertificateJob;
const result: CertificateJobResult =
  job.kind === "ca" ? await createCertificateAuthority(job.options) : await issueCertificate(job.options);
process.stdout.write(JSON.stringify(result));
