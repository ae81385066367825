// Which priority level and flow a request belongs to, in the spirit of API Priority and Fairness' FlowSchemas:
//
//   flow schema      priority level    flow (fair queuing)   who
//   probes           exempt            -                     /healthz, /livez, /readyz
//   long-running     exempt            -                     watches (they stream; they hold no seat)
//   exempt           exempt            -                     privileged callers: system:masters, platform admins
//   authenticated    workload          the user's name       every other authenticated caller
//   unauthenticated  unauthenticated   the client address    anonymous requests (logins, public paths)
//
// Exempt requests are never queued or limited, as kube-apiserver's exempt level (system:masters) is: an admin and
// a load balancer's probe always get in. The others share the server's seats by level and queue per flow.

import type { UserInfo } from "../../registry/types.ts";
import { clientKey } from "./client-address.ts";

export type PriorityLevel = "exempt" | "workload" | "unauthenticated";
export type FlowSchema = "probes" | "long-running" | "exempt" | "authenticated" | "unauthenticated";

export const PRIORITY_LEVELS: readonly PriorityLevel[] = ["exempt", "workload", "unauthenticated"];
export const FLOW_SCHEMAS: readonly { schema: FlowSchema; level: PriorityLevel }[] = [
  { schema: "probes", level: "exempt" },
  { schema: "long-running", level: "exempt" },
  { schema: "exempt", level: "exempt" },
  { schema: "authenticated", level: "workload" },
  { schema: "unauthenticated", level: "unauthenticated" },
];

const HEALTH_PATHS = ["/healthz", "/livez", "/readyz"];
const ANONYMOUS = "system:anonymous";
export const MASTERS_GROUP = "system:masters";

export interface Classification {
  level: PriorityLevel;
  schema: FlowSchema;
  /** The flow within the level: who the fair queuing is fair between ("" for exempt requests). */
  flow: string;
}

export interface ClassifyInput {
  resourceRequest: boolean;
  verb: string;
  path: string;
  /** The identity the request runs as (after impersonation). */
  user: UserInfo;
  /** Whether that identity is privileged (system:masters, a platform admin). */
  privileged: boolean;
  remoteAddress: string | undefined;
}

/** A health probe path, or one of its named checks (/readyz/ping). */
export function isHealthProbe(path: string): boolean {
  return HEALTH_PATHS.some((probe) => path === probe || path.startsWith(`${probe}/`));
}

/** Who is privileged unless the server says otherwise: the system:masters group. */
export function inMastersGroup(user: UserInfo): boolean {
  return user.groups.includes(MASTERS_GROUP);
}

/** Subresources kube-apiserver serves as long-running (its LongRunningRequestCheck), besides the verb watch. */
const LONG_RUNNING_SUBRESOURCES = new Set(["attach", "exec", "log", "portforward", "proxy"]);

/** A request that may stream for hours (a watch, exec, a followed log): it holds no seat, as in kube-apiserver. */
export function isLongRunning(info: { resourceRequest: boolean; verb: string; subresource: string }): boolean {
  // A proxy's own path follows its subresource (services/s/proxy/metrics).
  const subresource = info.subresource.split("/", 1)[0];
  return info.resourceRequest && (info.verb === "watch" || LONG_RUNNING_SUBRESOURCES.has(subresource));
}

export function classify(input: ClassifyInput): Classification {
  if (!input.resourceRequest && isHealthProbe(input.path)) return { level: "exempt", schema: "probes", flow: "" };
  if (input.resourceRequest && input.verb === "watch") return { level: "exempt", schema: "long-running", flow: "" };
  if (input.privileged) return { level: "exempt", schema: "exempt", flow: "" };
  if (input.user.name === ANONYMOUS) {
    return { level: "unauthenticated", schema: "unauthenticated", flow: clientKey(input.remoteAddress) };
  }
  return { level: "workload", schema: "authenticated", flow: input.user.name };
}
