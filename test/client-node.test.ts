// @kubernetes/client-node against the real platform over HTTPS: object CRUD, paging, and an informer that
// re-lists after a 410 (its resourceVersion was compacted away while it was disconnected).

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
} from "@kubernetes/client-node";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";
import { eventually } from "./support/kubectl.ts";

const API_VERSION = "management.platform.sh/v1";

interface User extends KubernetesObject {
  spec?: { email?: string; displayName?: string };
}

const user = (name: string, email = `${name}@example.com`): User => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { email },
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

describe("@kubernetes/client-node against the platform", () => {
  let dataDir: string;
  let port: number;
  let platform: RunningPlatform;
  let kubeConfig: KubeConfig;
  let api: KubernetesObjectApi;
  let custom: CustomObjectsApi;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-client-node-"));
    port = await freePort();
    platform = await startPlatform({ dataDir, host: "127.0.0.1", port });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(join(dataDir, "admin.kubeconfig"));
    api = KubernetesObjectApi.makeApiClient(kubeConfig);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
  });
  after(async () => {
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("KubernetesObjectApi creates, reads, patches, replaces and deletes a User", async () => {
    const created = await api.create(user("cn-alice"));
    assert.ok(created.metadata?.uid);
    const read = await api.read<User>({ apiVersion: API_VERSION, kind: "User", metadata: { name: "cn-alice" } });
    assert.equal(read.spec?.email, "cn-alice@example.com");
    const patched = await api.patch<User>(
      { apiVersion: API_VERSION, kind: "User", metadata: { name: "cn-alice" }, spec: { displayName: "Alice" } },
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    assert.equal(patched.spec?.displayName, "Alice");
    patched.spec = { ...patched.spec, email: "replaced@example.com" };
    const replaced = await api.replace(patched);
    assert.equal(replaced.spec?.email, "replaced@example.com");
    const applied = await api.patch<User>(
      { ...user("cn-alice", "applied@example.com") },
      undefined,
      undefined,
      "client-node-test",
      true,
      PatchStrategy.ServerSideApply,
    );
    assert.equal(applied.spec?.email, "applied@example.com");
    await api.delete(read);
    await assert.rejects(
      api.read({ apiVersion: API_VERSION, kind: "User", metadata: { name: "cn-alice" } }),
      (error: unknown) => error instanceof ApiException && error.code === 404,
    );
  });

  it("list pages with limit and continue", async () => {
    for (let i = 0; i < 12; i++) await api.create(user(`cn-page-${String(i).padStart(2, "0")}`));
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      // KubernetesObjectApi.list() drops list metadata (and so `continue`); CustomObjectsApi keeps it.
      const page = (await custom.listClusterCustomObject({
        group: "management.platform.sh",
        version: "v1",
        plural: "users",
        limit: 5,
        _continue: token,
      })) as KubernetesListObject<User> & { metadata?: { continue?: string } };
      names.push(...page.items.map((item) => item.metadata?.name ?? ""));
      token = page.metadata?.continue;
      pages++;
    } while (token);
    assert.ok(pages >= 3, `expected at least 3 pages, got ${pages}`);
    assert.equal(names.filter((n) => n.startsWith("cn-page-")).length, 12);
    assert.equal(new Set(names).size, names.length, "no item is listed twice");
  });

  it("an informer re-lists after a 410 and converges on the current state", async () => {
    // The kubeconfig's server URL already ends in /kubernetes/management.
    const path = "/apis/management.platform.sh/v1/users";
    let lists = 0;
    const informer = makeInformer<User>(kubeConfig, path, async () => {
      lists++;
      return api.list<User>(API_VERSION, "User");
    });
    let stopped = false;
    // client-node informers stop on connection errors (the server restarts below); restart like an operator would.
    informer.on("error", () => {
      if (!stopped) setTimeout(() => void (stopped || informer.start()), 200);
    });
    await informer.start();
    await api.create(user("cn-informed"));
    await eventually(() => informer.get("cn-informed") !== undefined, "the informer to see cn-informed");

    // Stop the server, rewrite history behind the informer's back and compact it, then restart on the same port.
    await platform.close();
    const storage = await openSqliteStore({ path: join(dataDir, "platform.db") });
    const key = "/management.platform.sh/users//cn-informed";
    const record = await storage.get(key);
    assert.ok(record);
    const changed = JSON.parse(record.value);
    changed.spec.email = "changed-offline@example.com";
    await storage.update(key, JSON.stringify(changed), record.revision);
    for (let i = 0; i < 5; i++) {
      const again = await storage.get(key);
      await storage.update(key, again!.value, again!.revision);
    }
    await storage.compact(1);
    await storage.close();
    platform = await startPlatform({ dataDir, host: "127.0.0.1", port });

    await eventually(
      () => informer.get("cn-informed")?.spec?.email === "changed-offline@example.com",
      "the informer to re-list after 410",
    );
    assert.ok(lists >= 2, "the informer listed again");
    stopped = true;
    await informer.stop();
  });
});
