// Every resource the management platform serves, in discovery order.

import { userDefinition } from "../apis/management/v1/user.ts";
import type { ResourceDefinition } from "../registry/types.ts";

export function managementResources(): ResourceDefinition[] {
  return [userDefinition as unknown as ResourceDefinition];
}
