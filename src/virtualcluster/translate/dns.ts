import type { NameMapper } from "./names.ts";

/** Longest DNS name accepted (RFC 1035 allows 253 characters; a little slack for a trailing dot). */
const MAX_DNS_LENGTH = 254;

/**
 * `<name>.<namespace>.svc[.<cluster-domain>]` -> `<hostName(name, namespace)>.<hostNamespace(namespace)>.svc[...]`.
 * Throws for anything not of that form, so a patch using it on the wrong value fails loudly.
 */
export function virtualToHostDNS(dnsName: string, names: NameMapper): string {
  if (typeof dnsName !== "string") throw new TypeError("virtualToHostDNS expects a string");
  if (dnsName.length > MAX_DNS_LENGTH) throw new TypeError("virtualToHostDNS: the name is longer than 254 characters");
  const parts = dnsName.split(".");
  const [name, namespace, svc] = parts;
  if (parts.length < 3 || !name || !namespace || svc !== "svc") {
    throw new TypeError(
      `virtualToHostDNS: ${JSON.stringify(dnsName)} is not of the form <name>.<namespace>.svc[.<cluster-domain>]`,
    );
  }
  const rest = parts.slice(2).join(".");
  return `${names.hostName(name, namespace)}.${names.hostNamespace(namespace)}.${rest}`;
}
