// Who is signed in (POST selves), and what they may do (SelfSubjectAccessReview), for the navigation and pages.

import { createContext, useContext } from "react";
import { API, api, apiRequest, CONSOLE_HEADERS } from "./api.ts";
import type { Self } from "./kube.ts";

export interface Session {
  user: string;
  username: string;
  displayName?: string;
  /** May list users (an admin, or a viewer of users). */
  canListUsers: boolean;
  canReadConfig: boolean;
  /** Namespace of project P: prefix + P. */
  projectNamespacePrefix: string;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("no session");
  return session;
}

export async function may(verb: string, resource: string): Promise<boolean> {
  const review = await api.create<{ status?: { allowed?: boolean } }>(`${API}/selfsubjectaccessreviews`, {
    apiVersion: "management.platform.sh/v1",
    kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes: { verb, group: "management.platform.sh", resource } },
  });
  return review.status?.allowed === true;
}

/** Who is signed in: the three questions go out together (the first page waits for all of them). */
export async function loadSession(): Promise<Session> {
  const [self, canListUsers, canReadConfig] = await Promise.all([
    apiRequest<Self>(`${API}/selves`, {
      method: "POST",
      body: { apiVersion: "management.platform.sh/v1", kind: "Self", spec: {} },
    }),
    may("list", "users"),
    may("get", "configs"),
  ]);
  const user = self.status?.user;
  return {
    user: user?.name ?? self.status?.team?.name ?? "",
    username: user?.username ?? user?.name ?? "",
    displayName: user?.displayName,
    canListUsers,
    canReadConfig,
    projectNamespacePrefix: self.status?.projectNamespacePrefix ?? "p-",
  };
}

let pending: Promise<Session> | undefined;

/** The session, asked once per page load (started before the first render, see main.tsx). */
export function sessionOnce(): Promise<Session> {
  pending ??= loadSession();
  return pending;
}

/** Logout is a POST from the platform's own pages (the console header says so; another site cannot send it). */
export async function logout(): Promise<void> {
  await fetch("/auth/logout", {
    method: "POST",
    headers: { ...CONSOLE_HEADERS, Accept: "application/json" },
    credentials: "same-origin",
  });
  window.location.assign("/login");
}
