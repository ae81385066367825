// Audit events as the Audit page shows them: the stages of one request (RequestReceived, ResponseStarted,
// ResponseComplete, Panic: each a stored event with the same auditID) folded into one row, and the console's own
// asset requests (its bundle, branding and page loads, which every visit makes) recognised so they can be hidden.

import type { AuditEvent, AuditEventBody } from "./kube.ts";

export type { AuditEventBody } from "./kube.ts";

/** An AuditEvent as the server sends it: always with its event, and named by its audit ID. */
export type AuditEventObject = AuditEvent & { event: AuditEventBody; metadata: { name: string } };

/** One request: its stages in order, and the fields a row shows (from its latest stage). */
export interface AuditRequest {
  auditID: string;
  stages: AuditEventObject[];
  latest: AuditEventBody;
  time?: string;
  instance?: string;
}

const STAGE_ORDER = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"];
const stageRank = (stage: string | undefined) => {
  const rank = STAGE_ORDER.indexOf(stage ?? "");
  return rank < 0 ? STAGE_ORDER.length : rank;
};

/** Events (newest first, as the API lists them) folded into requests, newest request first. */
export function groupRequests(events: AuditEventObject[]): AuditRequest[] {
  const requests = new Map<string, AuditRequest>();
  for (const item of events) {
    const auditID = item.event.auditID || item.metadata.name;
    let request = requests.get(auditID);
    if (!request) {
      request = {
        auditID,
        stages: [],
        latest: item.event,
        time: item.metadata.creationTimestamp ?? undefined,
        instance: item.instance,
      };
      requests.set(auditID, request);
    }
    request.stages.push(item);
  }
  for (const request of requests.values()) {
    request.stages.sort((a, b) => stageRank(a.event.stage) - stageRank(b.event.stage));
    request.latest = request.stages[request.stages.length - 1].event;
  }
  return [...requests.values()];
}

/** The console's pages (as the platform serves them to browser navigations, and every path below them). */
const CONSOLE_PAGES = ["/login", "/users", "/teams", "/access-keys", "/profile", "/projects", "/config", "/audit"];

/** A request of the console's own files: its bundle, favicon, branding, or a page load (never an API call). */
export function isConsoleAsset(event: AuditEventBody): boolean {
  if (event.objectRef || (event.verb !== "get" && event.verb !== "head")) return false;
  const path = (event.requestURI ?? "").split("?")[0];
  if (path.startsWith("/assets/") || path === "/console/settings" || path === "/favicon.ico") return true;
  // A page load is a browser navigation, public and answered 200; an API client asking the same path is not one.
  const pageLoad = event.user?.username === "system:anonymous" && (event.responseStatus?.code ?? 200) < 400;
  return pageLoad && (path === "/" || CONSOLE_PAGES.some((page) => path === page || path.startsWith(`${page}/`)));
}
