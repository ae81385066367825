// First start on an empty data directory: the `admin` user with the admin cluster role and its access key.
// The key is shown once and written to <data-dir>/admin-access-key (0600); only its digest is stored.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isStatusError } from "../apimachinery/errors.ts";
import { generateAccessKey } from "../auth/access-key-material.ts";
import { BootstrapAuthenticator } from "../auth/bootstrap-authenticator.ts";
import type { Registry } from "../registry/registry.ts";
import { systemContext } from "../registry/system-context.ts";

export const ADMIN_USER = "admin";
export const ADMIN_KEY_FILE = "admin-access-key";

export interface BootstrapResult {
  authenticator: BootstrapAuthenticator;
  /** The admin key, only on the start that created it. */
  createdKey?: string;
}

export async function bootstrapAdmin(registry: Registry, dataDir: string): Promise<BootstrapResult> {
  const existing = await BootstrapAuthenticator.load(registry.storage);
  if (existing) return { authenticator: existing };

  const users = registry.store("management.platform.sh", "users");
  if (!users) throw new Error("the users resource is not registered");
  const context = systemContext("system:bootstrap", "virtualcluster-bootstrap");
  try {
    await users.create(
      context,
      undefined,
      {
        apiVersion: "management.platform.sh/v1",
        kind: "User",
        metadata: { name: ADMIN_USER },
        spec: { displayName: "Admin", username: ADMIN_USER, clusterRoles: [{ name: "admin" }] },
      },
      { fieldManager: "virtualcluster-bootstrap" },
    );
  } catch (error) {
    // A user named admin that survived a crash between these two steps is fine to reuse.
    if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
  }
  const key = generateAccessKey();
  await writeFile(join(dataDir, ADMIN_KEY_FILE), `${key}\n`, { mode: 0o600 });
  const authenticator = await BootstrapAuthenticator.create(registry.storage, ADMIN_USER, key);
  return { authenticator, createdKey: key };
}
