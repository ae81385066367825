// An open watch does not outlive its caller's rights. A list is authorized and narrowed for the caller as they are
// when it is served; a watch runs as long as its client asks (timeoutSeconds), so the platform ends it once its key
// is revoked or deleted, or its caller's teams change, and the client's next list says what it may read now. Watches
// whose caller did not change keep running through the same writes.

import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { request } from "node:https";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MERGE = "application/merge-patch+json";

interface OpenWatch {
  /** Event lines received so far. */
  lines: string[];
  ended(): boolean;
  close(): void;
}

describe("an open watch ends when its caller changes", () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  const keys: Record<string, string> = {};
  const opened: OpenWatch[] = [];

  /** Opens a watch as kubectl does, with a day-long timeout; resolves once the stream is open. */
  const watch = (path: string, token: string, headers: Record<string, string> = {}): Promise<OpenWatch> =>
    new Promise((resolve, reject) => {
      const lines: string[] = [];
      let ended = false;
      const req = request(
        `${platform.url}${path}${path.includes("?") ? "&" : "?"}watch=1&timeoutSeconds=86400`,
        { headers: { authorization: `Bearer ${token}`, ...headers }, agent: false, ca: platform.caPem },
        (res: IncomingMessage) => {
          if (res.statusCode !== 200) reject(new Error(`watch ${path}: ${res.statusCode}`));
          let buffered = "";
          res.on("data", (chunk) => {
            buffered += chunk;
            const parts = buffered.split("\n");
            buffered = parts.pop() ?? "";
            lines.push(...parts.filter((line) => line.trim() !== ""));
          });
          res.on("end", () => {
            ended = true;
          });
          const open = { lines, ended: () => ended, close: () => req.destroy() };
          opened.push(open);
          resolve(open);
        },
      );
      req.on("error", reject);
      req.end();
    });

  const projectNamed = (name: string, spec: Record<string, unknown>) =>
    client.send("POST", `${API}/projects`, {
      token: admin,
      body: { apiVersion: V1, kind: "Project", metadata: { name }, spec },
    });

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    for (const user of ["bob", "carol", "dave"]) {
      await client.createUser(admin, user);
      keys[user] = await client.createKey(admin, `key-${user}`, { user });
    }
    await client.createUser(admin, "vera", { clusterRoles: [{ name: "viewer" }] });
    keys.vera = await client.createKey(admin, "key-vera", { user: "vera" });
    await client.createTeam(admin, "devs", { users: ["carol"] });
    for (const [name, spec] of Object.entries({
      pb: { owner: { user: "bob" } },
      pd: { members: [{ kind: "Team", name: "devs", clusterRole: "edit" }] },
      pv: { owner: { user: "dave" } },
    })) {
      const reply = await projectNamed(name, spec);
      assert.equal(reply.status, 201, reply.body);
    }
  });
  after(async () => {
    for (const open of opened) open.close();
    client?.close();
    await platform?.stop();
  });

  it("a key revoked by raising its user's tokenGeneration ends its watch of project secrets", async () => {
    const secrets = await watch(`${API}/namespaces/p-pb/projectsecrets`, keys.bob);
    const revoked = await client.send("PATCH", `${API}/users/bob`, {
      token: admin,
      contentType: MERGE,
      body: { spec: { tokenGeneration: 1 } },
    });
    assert.equal(revoked.status, 200, revoked.body);
    await waitFor(async () => secrets.ended(), "bob's watch to end");
    const relisted = await client.send("GET", `${API}/namespaces/p-pb/projectsecrets`, { token: keys.bob });
    assert.equal(relisted.status, 401);
  });

  it("a user taken out of the team that made them a member loses the project's watch, impersonated too", async () => {
    const own = await watch(`${API}/projects`, keys.carol);
    const impersonated = await watch(`${API}/projects`, admin, { "impersonate-user": "carol" });
    const unchanged = await watch(`${API}/projects`, keys.dave);
    const removed = await client.send("PATCH", `${API}/teams/devs`, {
      token: admin,
      contentType: MERGE,
      body: { spec: { users: [] } },
    });
    assert.equal(removed.status, 200, removed.body);
    await waitFor(async () => own.ended() && impersonated.ended(), "carol's watches to end");
    const relisted = await client.send("GET", `${API}/projects`, { token: keys.carol });
    assert.deepEqual(relisted.json().items, []);

    // dave's caller did not change: his watch saw the same writes and still delivers.
    const changed = await client.send("PATCH", `${API}/projects/pv`, {
      token: admin,
      contentType: MERGE,
      body: { spec: { description: "after the team changed" } },
    });
    assert.equal(changed.status, 200, changed.body);
    await waitFor(async () => unchanged.lines.some((line) => line.includes("after the team changed")), "dave's event");
    assert.equal(unchanged.ended(), false);
  });

  it("a viewer whose role is taken away loses the watch of every project", async () => {
    const projects = await watch(`${API}/projects`, keys.vera);
    const demoted = await client.send("PATCH", `${API}/users/vera`, {
      token: admin,
      contentType: MERGE,
      body: { spec: { clusterRoles: [] } },
    });
    assert.equal(demoted.status, 200, demoted.body);
    await waitFor(async () => projects.ended(), "vera's watch to end");
    assert.deepEqual((await client.send("GET", `${API}/projects`, { token: keys.vera })).json().items, []);
  });

  it("a deleted key ends its watch", async () => {
    const key = await client.createKey(admin, "key-dave-2", { user: "dave" });
    const projects = await watch(`${API}/projects`, key);
    const deleted = await client.send("DELETE", `${API}/ownedaccesskeys/key-dave-2`, { token: admin });
    assert.equal(deleted.status, 200, deleted.body);
    await waitFor(async () => projects.ended(), "the deleted key's watch to end");
    assert.equal((await client.send("GET", `${API}/projects`, { token: key })).status, 401);
  });
});
