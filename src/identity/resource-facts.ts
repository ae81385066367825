// The authorization facts of the resources a server serves, looked up per request by group and resource.
// Definitions declare them (src/registry/authorization-facts.ts); the rights, the scoped-key rules and the token
// rules read them here instead of keeping per-kind lists.

import type { AuthorizationFacts, CredentialFact } from "../registry/authorization-facts.ts";
import { credentialMinted } from "../registry/authorization-facts.ts";
import type { AuthorizationAttributes, ResourceDefinition } from "../registry/types.ts";

/** The served definition of group/resource, if any. */
export type DefinitionLookup = (group: string, resource: string) => ResourceDefinition | undefined;

export type FactsLookup = (request: AuthorizationAttributes) => AuthorizationFacts | undefined;

/** Facts of the resource a request names (undefined for non-resource requests and unknown resources). */
export function factsLookup(definitionOf: DefinitionLookup): FactsLookup {
  return (request) =>
    request.resourceRequest && request.resource !== undefined
      ? definitionOf(request.group ?? "", request.resource)?.authorization
      : undefined;
}

/** The credential the request would mint, if any. */
export function mintedBy(facts: FactsLookup, request: AuthorizationAttributes): CredentialFact | undefined {
  return credentialMinted(facts(request), request.verb, request.subresource);
}
