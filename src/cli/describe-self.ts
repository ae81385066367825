// "user admin (Admin)" / "team ops": how `platform login` names who a key belongs to.

import type { SelfObject } from "../virtualcluster/lifecycle/platform-client.ts";

/** Who a Self describes. */
export function describeSelf(self: SelfObject): string {
  const status = self.status ?? {};
  const entity = status.user ? { what: "user", ...status.user } : status.team ? { what: "team", ...status.team } : null;
  if (!entity) return status.subject ? `subject ${status.subject}` : "an unknown subject";
  const shown = entity.username || entity.name;
  return entity.displayName && entity.displayName !== shown
    ? `${entity.what} ${shown} (${entity.displayName})`
    : `${entity.what} ${shown}`;
}
