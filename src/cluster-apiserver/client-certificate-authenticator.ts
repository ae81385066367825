// Client certificates as credentials: a certificate signed by one of the configured CAs authenticates as its
// subject's CN, with its O values as groups (as kube-apiserver's x509 authenticator). TLS already verified the
// chain at the handshake; the check here is repeated against the CAs in force now, so a CA removed by a hot swap
// stops working even on connections kept alive from before.

import { X509Certificate } from "node:crypto";
import { errors } from "../apimachinery/errors.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";

const AUTHENTICATED = "system:authenticated";

/**
 * The ASN.1 parser for subjects (@peculiar/x509: about 200 modules and a few MiB), loaded with the first client
 * certificate to check rather than at start: many API servers never see one.
 */
let subjectParser: Promise<typeof import("../pki/x509.ts")> | undefined;
const loadSubjectParser = () => (subjectParser ??= import("../pki/x509.ts"));
type SubjectParser = Awaited<ReturnType<typeof loadSubjectParser>>["x509"];

interface Verdict {
  generation: number;
  user?: UserInfo;
  validFrom: number;
  validTo: number;
}

/** Splits a PEM bundle into its certificates. */
export function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

export class ClientCertificateAuthenticator implements Authenticator {
  #authorities: X509Certificate[] = [];
  #generation = 0;
  /** Per certificate buffer (one per TLS connection): the verdict under the current CAs. */
  readonly #verdicts = new WeakMap<Buffer, Verdict>();

  /** Groups every certificate user also gets (the runtime grants platform-signed users its administrators' group). */
  readonly #extraGroups: readonly string[];

  constructor(pems: string[] = [], options: { extraGroups?: string[] } = {}) {
    this.#extraGroups = options.extraGroups ?? [];
    this.setAuthorities(pems);
  }

  /** Replaces the trusted CAs (PEM, each may hold several certificates). Throws on a PEM that does not parse. */
  setAuthorities(pems: string[]): void {
    this.#authorities = pems.flatMap(certificatesOf);
    this.#generation++;
  }

  get hasAuthorities(): boolean {
    return this.#authorities.length > 0;
  }

  async authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> {
    const der = request.clientCertificate;
    if (!der || this.#authorities.length === 0) return undefined;
    let verdict = this.#verdicts.get(der);
    if (!verdict || verdict.generation !== this.#generation) {
      // Loaded before the check, so the check runs against the CAs in force once it is (no await inside it).
      const { x509 } = await loadSubjectParser();
      verdict = this.#verify(der, x509);
      this.#verdicts.set(der, verdict);
    }
    if (!verdict.user) return undefined;
    const now = Date.now();
    if (now >= verdict.validTo || now < verdict.validFrom) {
      throw errors.unauthorized("the client certificate has expired or is not yet valid");
    }
    return verdict.user;
  }

  #verify(der: Buffer, x509: SubjectParser): Verdict {
    const verdict: Verdict = { generation: this.#generation, validFrom: 0, validTo: 0 };
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(der);
    } catch {
      return verdict;
    }
    const trusted = this.#authorities.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
    if (!trusted) return verdict;
    // The subject is read with a real ASN.1 parser: a CN holding "\nO=system:masters" stays one CN.
    const subject = new x509.X509Certificate(der).subjectName;
    const name = subject.getField("CN")[0] ?? "";
    if (!name) return verdict;
    const groups = subject.getField("O");
    verdict.user = { name, groups: [...new Set([...groups, ...this.#extraGroups, AUTHENTICATED])] };
    verdict.validFrom = Date.parse(cert.validFrom);
    verdict.validTo = Date.parse(cert.validTo);
    return verdict;
  }
}
