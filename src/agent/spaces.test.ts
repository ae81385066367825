import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startClusterApiServer } from "../cluster-apiserver/cluster-api-server.ts";
import { loadKubeAccess } from "../virtualcluster/kube/kube-access.ts";
import { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import { SPACE_UID_LABEL, Spaces, spaceRoleBindings } from "./spaces.ts";

describe("spaceRoleBindings()", () => {
  it("spaceRoleBindings() binds each role that has members, users and teams as the agent impersonates them", () => {
    const bindings = spaceRoleBindings("ns", [
      { kind: "User", name: "owner", role: "admin" },
      { kind: "User", name: "dev", role: "edit" },
      { kind: "Team", name: "devs", role: "edit" },
    ]);
    assert.deepEqual(
      bindings.map((b) => [
        b.metadata.name,
        (b.roleRef as { name: string }).name,
        (b.subjects as { kind: string; name: string }[]).map((s) => `${s.kind}/${s.name}`),
      ]),
      [
        ["platform-admin", "admin", ["User/platform:user:owner"]],
        ["platform-edit", "edit", ["User/platform:user:dev", "Group/platform:team:devs"]],
      ],
    );
  });
});

describe("Spaces", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startClusterApiServer>>;
  let http: KubeHttp;
  let spaces: Spaces;
  const request = (members: { kind: "User" | "Team"; name: string; role: string }[], uid = "uid-1") => ({
    project: "p",
    space: "s",
    uid,
    members,
  });
  const bindings = async (namespace: string) =>
    (
      await http.request<{ items: { metadata: { name: string } }[] }>({
        method: "GET",
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      })
    ).items.map((item) => item.metadata.name);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "spaces-"));
    server = await startClusterApiServer({ dataDir: dir, port: 0 });
    http = new KubeHttp(await loadKubeAccess({ file: server.kubeconfigPath }));
    spaces = new Spaces(http);
  });
  after(async () => {
    http?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("put() creates the labelled namespace and its bindings, and brings the bindings up to date", async () => {
    assert.deepEqual(await spaces.put("space-one", request([{ kind: "User", name: "a", role: "edit" }])), {
      phase: "Ready",
    });
    const namespace = await http.request<{ metadata: { labels: Record<string, string> } }>({
      method: "GET",
      path: "/api/v1/namespaces/space-one",
    });
    assert.equal(namespace.metadata.labels[SPACE_UID_LABEL], "uid-1");
    assert.deepEqual(await bindings("space-one"), ["platform-edit"]);
    await spaces.put("space-one", request([{ kind: "User", name: "a", role: "view" }]));
    assert.deepEqual(await bindings("space-one"), ["platform-view"], "the edit binding went");
    assert.deepEqual(spaces.names(), ["p/s"]);
    assert.equal(spaces.namespaceOf("p", "s"), "space-one");
  });

  it("put() never takes over a namespace that is not this space's", async () => {
    await http.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "someone-elses" } } });
    const state = await spaces.put("someone-elses", request([]));
    assert.equal(state.phase, "Failed");
    assert.match(state.message ?? "", /already exists on the cluster and belongs to something else/);
    assert.deepEqual(await bindings("someone-elses"), []);
    assert.deepEqual(await spaces.delete("someone-elses", "uid-1"), { phase: "Gone" }, "and never deletes it");
  });

  it("delete() deletes the namespace and answers Gone once the host confirms", async () => {
    const first = await spaces.delete("space-one", "uid-1");
    assert.equal(first.phase, "Pending");
    for (;;) {
      const state = await spaces.delete("space-one", "uid-1");
      if (state.phase === "Gone") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(spaces.names(), []);
  });
});
