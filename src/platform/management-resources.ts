// Every resource the management platform serves, in discovery order.

import { configDefinition } from "../apis/management/v1/config.ts";
import { userDefinition } from "../apis/management/v1/user.ts";
import type { ResourceDefinition } from "../registry/types.ts";

/**
 * `auth`: the users definition with its auth subresources, and the auth resources (src/platform/auth.ts);
 * `projects`: projects and virtual cluster instances (src/platform/projects/project-resources.ts).
 */
export function managementResources(
  auth?: { user: ResourceDefinition; others: ResourceDefinition[] },
  projects: ResourceDefinition[] = [],
): ResourceDefinition[] {
  return [auth?.user ?? userDefinition, ...(auth?.others ?? []), ...projects, configDefinition()];
}
