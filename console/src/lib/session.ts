// Who is signed in (POST selves) and what they may do (SelfSubjectRulesReview: the server's own list of the rules
// it applies), asked together before the first page renders; every page builds its actions from `can`.

import { createContext, useContext, useEffect, useState } from "react";
import { API, apiRequest, CONSOLE_HEADERS, endingSession } from "./api.ts";
import type { Self } from "./kube.ts";
import { type Permissions, permissionsOf, type Rules } from "./permissions.ts";

export const AUTHORIZATION_API = "/kubernetes/management/apis/authorization.k8s.io/v1";

export interface Session extends Permissions {
  user: string;
  username: string;
  displayName?: string;
  email?: string;
  /** The teams the user belongs to (names). */
  teams: string[];
  /** The access key of this session, its type and when it expires. */
  accessKey?: string;
  accessKeyType?: string;
  expiresAt?: string;
  /** Namespace of project P: prefix + P. */
  projectNamespacePrefix: string;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("no session");
  return session;
}

/** The rules the caller holds in `namespace` (cluster-scoped resources: any namespace answers the same). */
export async function rulesIn(namespace: string): Promise<Permissions> {
  const review = await apiRequest<{ status?: Rules }>(`${AUTHORIZATION_API}/selfsubjectrulesreviews`, {
    method: "POST",
    body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } },
    repeatable: true,
  });
  return permissionsOf(review.status ?? {});
}

/** Who is signed in: both questions go out together (the first page waits for them). */
export async function loadSession(): Promise<Session> {
  const [self, permissions] = await Promise.all([
    apiRequest<Self>(`${API}/selves`, {
      method: "POST",
      body: { apiVersion: "management.platform.sh/v1", kind: "Self", spec: {} },
      repeatable: true,
    }),
    rulesIn("default"),
  ]);
  const status = self.status;
  const user = status?.user;
  return {
    ...permissions,
    user: user?.name ?? status?.team?.name ?? "",
    username: user?.username ?? user?.name ?? "",
    displayName: user?.displayName,
    email: user?.email,
    teams: (user?.teams ?? []).map((team) => team.name),
    accessKey: status?.accessKey,
    accessKeyType: status?.accessKeyType,
    expiresAt: status?.accessKeyExpirationTimestamp,
    projectNamespacePrefix: status?.projectNamespacePrefix ?? "p-",
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
  await endingSession(() =>
    fetch("/auth/logout", {
      method: "POST",
      headers: { ...CONSOLE_HEADERS, Accept: "application/json" },
      credentials: "same-origin",
    }),
  );
  window.location.assign("/login");
}

/** The caller's rules in a namespace (a project's), asked once per namespace shown; undefined until known. */
export function useRulesIn(namespace: string): Permissions | undefined {
  const [permissions, setPermissions] = useState<Permissions>();
  useEffect(() => {
    let current = true;
    setPermissions(undefined);
    rulesIn(namespace).then(
      (answer) => current && setPermissions(answer),
      () => current && setPermissions(permissionsOf({})),
    );
    return () => {
      current = false;
    };
  }, [namespace]);
  return permissions;
}
