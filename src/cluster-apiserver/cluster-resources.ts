// Every resource a cluster API server serves, in discovery order: core/v1, discovery.k8s.io/v1 EndpointSlices,
// rbac.authorization.k8s.io/v1 and the self access review. Namespaced kinds get the namespace lifecycle check, RBAC
// kinds the escalation checks.

import { selfSubjectReviewDefinition } from "../apis/authentication/v1/selfsubjectreview.ts";
import { selfSubjectAccessReviewDefinition } from "../apis/authorization/v1/selfsubjectaccessreview.ts";
import { selfSubjectRulesReviewDefinition } from "../apis/authorization/v1/selfsubjectrulesreview.ts";
import { configMapDefinition } from "../apis/core/v1/configmap.ts";
import { endpointsDefinition } from "../apis/core/v1/endpoints.ts";
import { eventDefinition } from "../apis/core/v1/event.ts";
import { namespaceDefinition } from "../apis/core/v1/namespace.ts";
import { secretDefinition } from "../apis/core/v1/secret.ts";
import { createServiceDefinition } from "../apis/core/v1/service.ts";
import type { ServiceAddressAllocator } from "../apis/core/v1/service-addresses.ts";
import { serviceAccountDefinition } from "../apis/core/v1/serviceaccount.ts";
import { endpointSliceDefinition } from "../apis/discovery/v1/endpointslice.ts";
import { clusterRoleDefinition } from "../apis/rbac/v1/clusterrole.ts";
import { clusterRoleBindingDefinition } from "../apis/rbac/v1/clusterrolebinding.ts";
import { roleDefinition } from "../apis/rbac/v1/role.ts";
import { roleBindingDefinition } from "../apis/rbac/v1/rolebinding.ts";
import type { ActionHandler, ResourceDefinition } from "../registry/types.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { withNamespaceLifecycle } from "./namespace-lifecycle.ts";
import { type RoleRules, withEscalationChecks } from "./rbac-escalation.ts";

const any = (definition: unknown) => definition as ResourceDefinition;

export function clusterResources(
  allocator: ServiceAddressAllocator,
  storage: KeyValueStore,
  roleRules: RoleRules,
  serviceAccountToken?: ActionHandler,
): ResourceDefinition[] {
  const serviceAccounts = serviceAccountToken
    ? { ...serviceAccountDefinition, subresources: { token: serviceAccountToken } }
    : serviceAccountDefinition;
  return [
    any(namespaceDefinition),
    any(createServiceDefinition(allocator)),
    any(endpointsDefinition),
    any(endpointSliceDefinition),
    any(secretDefinition),
    any(configMapDefinition),
    any(serviceAccounts),
    any(eventDefinition),
    any(roleDefinition),
    any(clusterRoleDefinition),
    any(roleBindingDefinition),
    any(clusterRoleBindingDefinition),
    selfSubjectAccessReviewDefinition,
    selfSubjectRulesReviewDefinition,
    selfSubjectReviewDefinition,
  ].map((definition) => withEscalationChecks(withNamespaceLifecycle(definition, storage), roleRules));
}
