// The platform's own CA and serving certificate, made in a short-lived child process: @peculiar/x509 and what it
// brings (about 6 MiB once loaded) would otherwise stay in the server for its whole life after a first start or a
// renewal, for milliseconds of work a year. A first start makes its CA and the certificate it signs in one child
// (each child spends about 0.3 s of CPU loading the library). A worker thread does not give that memory back to the
// process (measured: the idle platform held 6 MiB more with one than without). Certificates issued while the platform
// serves (kubeconfigs, instance CAs) load the library in the server when first needed instead (issue 36).

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { CertificateAuthority, IssueOptions } from "./certificate-authority.ts";

export interface CertificateAuthorityOptions {
  commonName: string;
  validityDays?: number;
}

export type CertificateJob =
  | { kind: "issue"; options: IssueOptions }
  | { kind: "ca-and-issue"; options: { ca: CertificateAuthorityOptions; issue: Omit<IssueOptions, "ca"> } };

export interface IssuedCertificate {
  certPem: string;
  keyPem?: string;
}

export type CertificateJobResult = IssuedCertificate | { ca: CertificateAuthority; issued: IssuedCertificate };

const CHILD = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "./certificate-process.ts" : "./certificate-process.js", import.meta.url),
);

/** Runs `job` in a child process of the same node; the job and its keys travel through pipes, never argv or env. */
function run(job: CertificateJob): Promise<CertificateJobResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) {
        resolve(JSON.parse(stdout) as CertificateJobResult);
        return;
      }
      // The child's error names what failed (a name, an address); it never holds a key.
      const reason = /^\w*Error: (.*)$/m.exec(stderr)?.[1] ?? `exit code ${code}`;
      reject(new Error(`making a certificate failed: ${reason}`));
    });
    child.stdin.end(JSON.stringify(job));
  });
}

/** issueCertificate() in a child process. */
export async function issueCertificateInChild(options: IssueOptions): Promise<IssuedCertificate> {
  return (await run({ kind: "issue", options })) as IssuedCertificate;
}

/** createCertificateAuthority(), then issueCertificate() signed by that CA, in one child process. */
export async function createCertificateAuthorityAndIssueInChild(
  ca: CertificateAuthorityOptions,
  issue: Omit<IssueOptions, "ca">,
): Promise<{ ca: CertificateAuthority; issued: IssuedCertificate }> {
  return (await run({ kind: "ca-and-issue", options: { ca, issue } })) as {
    ca: CertificateAuthority;
    issued: IssuedCertificate;
  };
}
