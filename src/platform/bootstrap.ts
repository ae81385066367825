// First start on an empty data directory: the `admin` user with the admin cluster role, a real OwnedAccessKey for it
// and a generated password. Key and password are shown once and written to <data-dir>/admin-access-key and
// <data-dir>/admin-password (0600); the server stores only the key's digest and the password's scrypt hash.
// A marker written last makes a restart skip this; a crash half-way simply runs it again.

import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isStatusError } from "../apimachinery/errors.ts";
import { GROUP, VERSION } from "../apis/management/v1/common.ts";
import { generateAccessKey } from "../auth/access-key-material.ts";
import type { PasswordStore } from "../identity/password-store.ts";
import type { Registry } from "../registry/registry.ts";
import { systemContext } from "../registry/system-context.ts";
import { claimOneTimeJob, waitForOneTimeJob } from "../storage/one-time-claim.ts";
import { StorageError } from "../storage/types.ts";

export const ADMIN_USER = "admin";
export const ADMIN_KEY_FILE = "admin-access-key";
export const ADMIN_PASSWORD_FILE = "admin-password";
export const ADMIN_KEY_NAME = "admin-bootstrap";
const MARKER = "/internal/bootstrap/admin";
const CLAIM = "/internal/bootstrap/claim";
/** Where the first design kept the admin key's digest (before access keys were objects). */
const LEGACY_RECORD = "/internal/bootstrap/admin-access-key";
const MANAGER = "virtualcluster-bootstrap";

export interface BootstrapResult {
  /** The admin key and password, only on the start that created them. */
  createdKey?: string;
  createdPassword?: string;
}

const ignore = (reason: string) => (error: unknown) => {
  if (!(isStatusError(error) && error.reason === reason)) throw error;
};

export async function bootstrapAdmin(
  registry: Registry,
  dataDir: string,
  passwords: PasswordStore,
  options: { shared?: boolean } = {},
): Promise<BootstrapResult> {
  const storage = registry.storage;
  if (await storage.get(MARKER)) return {};
  // Replicas starting together on an empty etcd: one makes the admin, the others wait for it.
  if (options.shared && !(await claimOneTimeJob({ storage, key: CLAIM }))) {
    await waitForOneTimeJob("the first start's admin user", () => storage.get(MARKER));
    return {};
  }
  const users = registry.genericStore(GROUP, "users");
  const keys = registry.genericStore(GROUP, "ownedaccesskeys");
  if (!users || !keys) throw new Error("the users and ownedaccesskeys resources are not registered");
  const context = () => systemContext("system:bootstrap", MANAGER);

  await users
    .create(
      context(),
      undefined,
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "User",
        metadata: { name: ADMIN_USER },
        spec: { displayName: "Admin", username: ADMIN_USER, clusterRoles: [{ name: "admin" }] },
      },
      { fieldManager: MANAGER },
    )
    // A user named admin that survived a crash between these steps is fine to reuse.
    .catch(ignore("AlreadyExists"));
  const admin = await users.get(context(), { name: ADMIN_USER });

  const key = generateAccessKey();
  const password = randomBytes(18).toString("base64url");
  await writeFile(join(dataDir, ADMIN_KEY_FILE), `${key}\n`, { mode: 0o600 });
  await writeFile(join(dataDir, ADMIN_PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
  // A key left by an interrupted earlier run has lost its plain value: replace it.
  await keys.delete(context(), { name: ADMIN_KEY_NAME }, {}).catch(ignore("NotFound"));
  await keys.create(
    context(),
    undefined,
    {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "OwnedAccessKey",
      metadata: { name: ADMIN_KEY_NAME },
      spec: { displayName: "Admin key created on first start", user: ADMIN_USER, type: "User", key },
    },
    { fieldManager: MANAGER },
  );
  await passwords.set({ name: ADMIN_USER, uid: admin.metadata.uid ?? "" }, password);
  await storage.delete(LEGACY_RECORD).catch((error) => {
    if (!(error instanceof StorageError)) throw error;
  });
  await storage.create(MARKER, JSON.stringify({ created: new Date().toISOString() }));
  return { createdKey: key, createdPassword: password };
}
