// Where a stored secret goes: the fields beside it that decide which server receives it (issuer, endpoints, host)
// and as whom (client id), and whether that server is authenticated (trusted CAs, insecure switches). A write that
// keeps a secret through the redaction marker may not change any of them: otherwise an admin who can edit the
// Config but never saw the secret could point the connector at their own server and receive it.

import type { PathSegment } from "./yaml-source.ts";

/** By provider block: the fields that decide where its clientSecret is sent. */
const PROVIDER_DESTINATIONS: Record<string, string[]> = {
  oidc: ["issuerUrl", "clientId", "caFile", "insecureCa"],
  codeHostA: ["clientId", "hostName", "rootCA"],
  codeHostB: ["clientId", "baseURL"],
  idpA: ["clientId"],
  idpB: ["clientId", "tenant"],
};

export interface SecretDestination {
  /** The object holding the secret and the fields. */
  block: PathSegment[];
  fields: string[];
}

/** The destination fields of the secret at `path`, or undefined when the secret is not sent anywhere. */
export function secretDestination(path: readonly PathSegment[]): SecretDestination | undefined {
  const last = path.at(-1);
  const parent = path.slice(0, -1);
  const kind = parent.at(-1);
  const inAuth =
    (parent.length === 2 && parent[0] === "auth") ||
    (parent.length === 4 && parent[0] === "auth" && parent[1] === "connectors" && typeof parent[2] === "number");
  if (last === "clientSecret" && inAuth && typeof kind === "string" && PROVIDER_DESTINATIONS[kind]) {
    return { block: parent, fields: PROVIDER_DESTINATIONS[kind] };
  }
  if (last === "password" && parent.length === 3 && parent[0] === "apps" && parent[1] === "repositories") {
    return { block: parent, fields: ["url", "username", "insecure"] };
  }
  if (path.length === 3 && path[0] === "secretStore" && path[1] === "auth" && last === "token") {
    return { block: ["secretStore"], fields: ["address", "skipTLSVerify"] };
  }
  return undefined;
}
