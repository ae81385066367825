// Granting needs bind, everywhere (issue 15 item 4). One table over every granting field the platform's resources
// declare (AuthorizationFacts.grants), read from the running platform's own registry: a field added later is in the
// table by construction, and a resource added later fails here until it has a base object. For each field, over
// real HTTPS: a caller who may update the object but holds no bind/makeowner/escalate is refused (403) and nothing
// changes; an admin naming a user or team that does not exist gets 422 naming the field; naming one that does works.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import type { GrantingField, SubjectKind } from "../src/registry/authorization-facts.ts";
import { GenericStore } from "../src/registry/store.ts";
import { API, AuthClient } from "./support/auth-client.ts";

const V1 = "management.platform.sh/v1";
const GRANTER = "granter";
const EXISTING: Record<SubjectKind, string> = { User: "alice", Team: "alice-team" };
const MISSING: Record<SubjectKind, string> = { User: "ghost", Team: "ghost-team" };

/** An object of each resource with granting fields, owned by the granter (owners may update, not grant). */
const BASES: Record<string, { path: string; body: object }> = {
  users: {
    path: `${API}/users`,
    body: { apiVersion: V1, kind: "User", metadata: { name: "base-user" }, spec: { owner: { user: GRANTER } } },
  },
  teams: {
    path: `${API}/teams`,
    body: { apiVersion: V1, kind: "Team", metadata: { name: "base-team" }, spec: { owner: { user: GRANTER } } },
  },
  projects: {
    path: `${API}/projects`,
    body: { apiVersion: V1, kind: "Project", metadata: { name: "base" }, spec: { owner: { user: GRANTER } } },
  },
  virtualclusterinstances: {
    path: `${API}/namespaces/p-base/virtualclusterinstances`,
    body: {
      apiVersion: V1,
      kind: "VirtualClusterInstance",
      metadata: { name: "base-vc" },
      spec: { owner: { user: GRANTER } },
    },
  },
  clusters: {
    path: `${API}/clusters`,
    body: { apiVersion: V1, kind: "Cluster", metadata: { name: "base-cluster" }, spec: { owner: { user: GRANTER } } },
  },
  spaceinstances: {
    path: `${API}/namespaces/p-base/spaceinstances`,
    body: {
      apiVersion: V1,
      kind: "SpaceInstance",
      metadata: { name: "base-space" },
      spec: { owner: { user: GRANTER }, clusterRef: { cluster: "base-cluster" } },
    },
  },
};

describe("granting fields need bind (or makeowner, or escalate), and name subjects that exist", () => {
  let dataDir: string;
  let platform: RunningPlatform;
  let client: AuthClient;
  let admin: string;
  let granter: string;
  const granting: { plural: string; field: GrantingField }[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-grants-"));
    platform = await startPlatform({ dataDir, host: "127.0.0.1", port: 0 });
    client = new AuthClient(platform.url, await readFile(join(dataDir, "pki", "ca.crt"), "utf8"));
    admin = (await readFile(join(dataDir, "admin-access-key"), "utf8")).trim();
    for (const store of platform.registry.stores()) {
      if (!(store instanceof GenericStore)) continue;
      for (const field of store.definition.authorization?.grants ?? []) {
        granting.push({ plural: store.definition.plural, field });
      }
    }
    await client.createUser(admin, GRANTER);
    await client.createUser(admin, EXISTING.User);
    const team = await client.send("POST", `${API}/teams`, {
      token: admin,
      body: { apiVersion: V1, kind: "Team", metadata: { name: EXISTING.Team }, spec: {} },
    });
    assert.equal(team.status, 201, team.body);
    granter = await client.createKey(admin, "granter-key", { user: GRANTER });
    for (const plural of ["users", "teams", "projects", "virtualclusterinstances", "clusters", "spaceinstances"]) {
      const base = BASES[plural];
      const created = await client.send("POST", base.path, { token: admin, body: base.body });
      assert.equal(created.status, 201, `${plural}: ${created.body}`);
    }
  });
  after(async () => {
    client?.close();
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const objectPath = (plural: string) => {
    const base = BASES[plural];
    return `${base.path}/${(base.body as { metadata: { name: string } }).metadata.name}`;
  };
  /** JSON patch `add` (which replaces) of the field with `value`. */
  const patchField = (token: string, plural: string, field: GrantingField, value: unknown) =>
    client.send("PATCH", objectPath(plural), {
      token,
      body: [{ op: "add", path: `/${field.path.split(".").join("/")}`, value }],
      contentType: "application/json-patch+json",
    });

  it("covers every resource that declares granting fields, and the fields the issue names", () => {
    const declared = new Set(granting.map((g) => `${g.plural} ${g.field.path}`));
    for (const plural of new Set(granting.map((g) => g.plural))) {
      assert.ok(BASES[plural], `add a base object for ${plural} to this test`);
    }
    for (const expected of [
      "projects spec.members",
      "projects spec.owner",
      "virtualclusterinstances spec.access",
      "virtualclusterinstances spec.owner",
      "teams spec.users",
      "teams spec.owner",
      "users spec.access",
      "users spec.owner",
      "clusters spec.access",
      "clusters spec.owner",
      "spaceinstances spec.owner",
    ]) {
      assert.ok(declared.has(expected), `${expected} is declared as a granting field`);
    }
  });

  it("a caller who may update the object but not grant is refused through every granting field, and nothing changes", async () => {
    for (const { plural, field } of granting) {
      const before = (await client.send("GET", objectPath(plural), { token: admin })).json();
      const kinds = field.subjects?.kinds ?? (["User"] as const);
      for (const kind of kinds) {
        const reply = await patchField(granter, plural, field, field.example({ kind, name: EXISTING[kind] }));
        assert.equal(reply.status, 403, `${plural} ${field.path} (${kind}): ${reply.body}`);
        const verbs = field.escalate ? "escalate|bind|makeowner" : (field.subjects?.verb ?? "escalate");
        assert.match(reply.json().message, new RegExp(`User "${GRANTER}" cannot (${verbs}) resource`), reply.body);
      }
      const after = (await client.send("GET", objectPath(plural), { token: admin })).json();
      assert.equal(
        after.metadata.resourceVersion,
        before.metadata.resourceVersion,
        `${plural} ${field.path} unchanged`,
      );
    }
  });

  it("naming a user or team that does not exist is 422 on the entry's path; naming one that exists works", async () => {
    for (const { plural, field } of granting) {
      for (const kind of field.subjects?.kinds ?? []) {
        const missing = await patchField(admin, plural, field, field.example({ kind, name: MISSING[kind] }));
        assert.equal(missing.status, 422, `${plural} ${field.path} (${kind} ${MISSING[kind]}): ${missing.body}`);
        const cause = missing.json().details.causes[0];
        assert.equal(cause.reason, "FieldValueNotFound");
        assert.ok(cause.field.startsWith(field.path), `${cause.field} is inside ${field.path}`);
        assert.match(cause.message, new RegExp(`"${MISSING[kind]}": no ${kind.toLowerCase()} of that name exists`));

        const existing = await patchField(admin, plural, field, field.example({ kind, name: EXISTING[kind] }));
        assert.equal(existing.status, 200, `${plural} ${field.path} (${kind}): ${existing.body}`);
      }
    }
  });

  it("a subject granted before and deleted since does not block an unrelated edit", async () => {
    await client.createUser(admin, "leaver");
    const members = [{ kind: "User", name: "leaver", clusterRole: "view" }];
    const added = await client.send("PATCH", objectPath("projects"), {
      token: admin,
      body: { spec: { members } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(added.status, 200, added.body);
    assert.equal((await client.send("DELETE", `${API}/users/leaver`, { token: admin })).status, 200);
    const edited = await client.send("PATCH", objectPath("projects"), {
      token: admin,
      body: { spec: { displayName: "still editable" } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(edited.status, 200, edited.body);
  });
});
