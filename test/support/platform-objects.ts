// Platform objects the virtual cluster tests need, made and read over HTTPS as the platform's admin.

import assert from "node:assert/strict";
import { API, type AuthClient } from "./auth-client.ts";
import type { PlatformProcess } from "./platform-process.ts";

/** The scope of a key with the role `virtualcluster` for every project. */
export const VIRTUALCLUSTER_SCOPE = { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] };

/** Creates an access key of the admin (with `scope`, if given) and returns the key. */
export async function createAccessKey(
  client: AuthClient,
  platform: PlatformProcess,
  name: string,
  scope?: unknown,
): Promise<string> {
  const reply = await client.send("POST", `${API}/ownedaccesskeys`, {
    token: platform.adminKey,
    body: {
      apiVersion: "management.platform.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name },
      spec: { type: "User", user: "admin", displayName: name, ...(scope ? { scope } : {}) },
    },
  });
  assert.equal(reply.status, 201, reply.body);
  return reply.json().spec.key as string;
}

/** The VirtualClusterInstance `name` of the default project, or undefined. */
export async function readInstance(client: AuthClient, platform: PlatformProcess, name: string) {
  const reply = await client.send("GET", `${API}/namespaces/p-default/virtualclusterinstances/${name}`, {
    token: platform.adminKey,
  });
  return reply.status === 200 ? reply.json() : undefined;
}
