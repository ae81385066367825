// Watches resuming from history that compaction removed (issue 30 item 9), over the real CLI process: after a
// restart more than the compaction retention past the last Config write, the platform's own Config watch used to
// resume from the Config's revision, get 410 Gone and start again five times a second until the Config was written.
// A watch resumes from the revision of the list it just made, and after 410 lists once more and carries on.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

/** Compaction every second keeping one second of history. */
const QUICK = ["--store-compaction-interval", "1s", "--store-compaction-retention", "1s"];
const V1 = "management.platform.sh/v1";

describe("watches resuming from compacted history", () => {
  let dataDir: string;
  const platforms: PlatformProcess[] = [];
  after(async () => {
    await Promise.all(platforms.map((platform) => platform.stop()));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    const platform = await startPlatformProcess({ dataDir, extraArgs: QUICK, env: { LOG_LEVEL: "info" } });
    platforms.push(platform);
    return { platform, client: new AuthClient(platform.url, platform.caPem) };
  };
  const compactedRevision = async (platform: PlatformProcess, client: AuthClient) => {
    const reply = await client.send("GET", "/metrics", { token: platform.adminKey });
    return Number(/^apiserver_storage_compacted_revision (\d+)$/m.exec(reply.body)?.[1] ?? 0);
  };
  /** Creates a user and waits until compaction has passed its revision: the history before it is gone. */
  const writeAndCompact = async (platform: PlatformProcess, client: AuthClient, name: string) => {
    const created = await client.send("POST", `${API}/users`, {
      token: platform.adminKey,
      body: { apiVersion: V1, kind: "User", metadata: { name }, spec: {} },
    });
    assert.equal(created.status, 201, created.body);
    const revision = Number(created.json().metadata.resourceVersion);
    await waitFor(async () => (await compactedRevision(platform, client)) >= revision, `compaction past ${name}`);
  };

  it("after a restart past compaction the Config watch lists once and continues, and Config writes apply", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-compacted-"));
    const first = await start();
    const config = await first.client.send("GET", `${API}/configs/platform-config`, { token: first.platform.adminKey });
    assert.equal(config.status, 200, config.body);
    await writeAndCompact(first.platform, first.client, "after-config");
    await first.platform.stop();

    const second = await start();
    const admin = second.platform.adminKey;
    // A second or more of the platform running: a write, and compaction past it.
    await writeAndCompact(second.platform, second.client, "after-restart");
    const restarts = second.platform.stderr().match(/platform config watch ended/g) ?? [];
    assert.ok(
      restarts.length <= 1,
      `the Config watch restarted ${restarts.length} times:\n${second.platform.stderr()}`,
    );

    const written = await second.client.send("PATCH", `${API}/configs/platform-config`, {
      token: admin,
      contentType: "application/merge-patch+json",
      body: { spec: { raw: "projectNamespacePrefix: after-\n" } },
    });
    assert.equal(written.status, 200, written.body);
    await waitFor(async () => {
      const self = await second.client.send("POST", `${API}/selves`, {
        token: admin,
        body: { apiVersion: V1, kind: "Self", spec: {} },
      });
      return self.json().status?.projectNamespacePrefix === "after-";
    }, "the Config write in force");
  });
});
