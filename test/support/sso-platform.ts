// Helpers for single sign-on tests against the real platform: write the Config, read users, teams and keys as the
// admin, and check what a Login key can do.

import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { send } from "./https-json.ts";
import type { PlatformProcess } from "./platform-process.ts";

export const MGMT = "/apis/management.platform.sh/v1";

/** Replaces the platform's Config (spec.raw) and waits until it answers with it. */
export async function setPlatformConfig(platform: PlatformProcess, raw: string): Promise<void> {
  const reply = await send(platform, "PATCH", `${MGMT}/configs/platform-config`, {
    token: platform.adminKey,
    body: { spec: { raw } },
    contentType: "application/merge-patch+json",
  });
  assert.equal(reply.status, 200, reply.body);
}

// biome-ignore lint/suspicious/noExplicitAny: tests read objects field by field
export async function adminGet(platform: PlatformProcess, path: string): Promise<{ status: number; json: any }> {
  const reply = await send(platform, "GET", `${MGMT}/${path}`, { token: platform.adminKey });
  return { status: reply.status, json: reply.status === 200 ? reply.json() : reply.body };
}

/** The status of GET /selves-style access with a key: a User read of its own object. */
export async function keyWorks(platform: PlatformProcess, key: string, user: string): Promise<number> {
  return (await send(platform, "GET", `${MGMT}/users/${user}`, { token: key })).status;
}

/** A file holding a PEM (caFile, service account files). */
export async function tempFile(name: string, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "vcp-sso-"));
  const file = join(dir, name);
  await writeFile(file, content, { mode: 0o600 });
  return file;
}

/** The value of a cookie the browser holds for a URL. */
export async function cookieValue(
  jar: { getCookies(url: string): Promise<{ key: string; value: string }[]> },
  url: string,
  name: string,
): Promise<string | undefined> {
  return (await jar.getCookies(url)).find((c) => c.key === name)?.value;
}
