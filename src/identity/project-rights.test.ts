import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createProjectDefinition } from "../apis/management/v1/project.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import type { AuthorizationAttributes, UserInfo } from "../registry/types.ts";
import { ProjectIndex } from "./project-index.ts";
import { type AuthFixture, openAuthFixture, platform, testInstancesDefinition } from "./testing.ts";

const G = "management.platform.sh";
const projects = createProjectDefinition({ namespacePrefix: () => "p-" });

describe("project rights (PlatformAuthorizer with projects)", () => {
  let f: AuthFixture;
  let informer: StoreInformer;
  const users: Record<string, UserInfo> = {};
  const ask = (who: string, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) =>
    f.authorizer.decide({ user: users[who], verb, group: G, version: "v1", resource, resourceRequest: true, ...extra });
  const allowed = (who: string, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) =>
    ask(who, verb, resource, extra).allowed;
  const inA = (extra: Partial<AuthorizationAttributes> = {}) => ({ namespace: "p-a", ...extra });

  before(async () => {
    f = await openAuthFixture([projects, testInstancesDefinition]);
    for (const name of ["viv", "ed", "ada", "olga", "tom", "nobody", "root"]) {
      await f.createUser(name, name === "root" ? { clusterRoles: [{ name: "admin" }] } : {});
    }
    await f.createTeam("ops", { users: ["tom"] });
    await f.env.registry.genericStore(G, "projects")!.create(
      platform(),
      undefined,
      {
        apiVersion: `${G}/v1`,
        kind: "Project",
        metadata: { name: "a" },
        spec: {
          owner: { user: "olga" },
          members: [
            { kind: "User", name: "viv", clusterRole: "view" },
            { kind: "User", name: "ed", clusterRole: "edit" },
            { kind: "User", name: "ada", clusterRole: "admin" },
            { kind: "User", name: "tom", clusterRole: "view" },
            { kind: "Team", name: "ops", clusterRole: "edit" },
          ],
        },
      },
      {},
    );
    const index = new ProjectIndex();
    informer = new StoreInformer(f.env.registry.storage, index);
    await informer.start();
    f.authorizer.useProjects(index, () => informer.fresh());
    const keys: Record<string, Record<string, unknown>> = {
      viv: { user: "viv" },
      ed: { user: "ed" },
      ada: { user: "ada" },
      olga: { user: "olga" },
      tom: { user: "tom" },
      nobody: { user: "nobody" },
      opsKey: { team: "ops" },
      edOtherProject: { user: "ed", scope: { projects: [{ project: "b" }] } },
      edThisProject: { user: "ed", scope: { projects: [{ project: "a" }] } },
      edOneCluster: { user: "ed", scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] } },
      edCli: { user: "ed", scope: { roles: [{ role: "platformCLI" }] } },
      rootCli: { user: "root", scope: { allowPlatformCli: true } },
    };
    for (const [name, spec] of Object.entries(keys)) {
      const key = await f.createKey(`key-${name.toLowerCase()}`, spec);
      users[name] = (await f.authenticator.authenticateToken(key, { touch: false }))!;
    }
  });
  after(async () => {
    informer.stop();
    await f.close();
  });

  it("decide() lets view members read the project's instances and get kubeconfigs, and nothing more", () => {
    for (const verb of ["get", "list", "watch"])
      assert.ok(allowed("viv", verb, "virtualclusterinstances", inA()), verb);
    assert.ok(allowed("viv", "get", "virtualclusterinstances", inA({ name: "vc1", subresource: "status" })));
    assert.ok(allowed("viv", "create", "virtualclusterinstances", inA({ name: "vc1", subresource: "kubeconfig" })));
    assert.deepEqual(ask("viv", "create", "virtualclusterinstances", inA()), {
      allowed: false,
      reason: 'user "viv" has the role "view" in project "a", which does not allow it',
    });
    assert.equal(
      allowed("viv", "patch", "virtualclusterinstances", inA({ name: "vc1", subresource: "status" })),
      false,
    );
    assert.ok(allowed("viv", "get", "projects", { name: "a" }));
    assert.equal(allowed("viv", "update", "projects", { name: "a" }), false);
  });

  it("decide() lets edit members (directly or through a team) write instances, not the project", () => {
    for (const who of ["ed", "tom", "opsKey"]) {
      for (const verb of ["create", "deletecollection"])
        assert.ok(allowed(who, verb, "virtualclusterinstances", inA()), `${who} ${verb}`);
      for (const verb of ["update", "patch", "delete"]) {
        assert.ok(allowed(who, verb, "virtualclusterinstances", inA({ name: "vc1" })), `${who} ${verb}`);
      }
      assert.ok(allowed(who, "patch", "virtualclusterinstances", inA({ name: "vc1", subresource: "status" })));
      assert.equal(
        allowed(who, "delete", "virtualclusterinstances", inA({ name: "vc1", subresource: "status" })),
        false,
      );
      assert.equal(allowed(who, "update", "projects", { name: "a" }), false);
    }
  });

  it("decide() lets project admins and the owner change the project, but not delete it", () => {
    for (const who of ["ada", "olga"]) {
      assert.ok(allowed(who, "create", "virtualclusterinstances", inA()), who);
      assert.ok(allowed(who, "patch", "projects", { name: "a" }), who);
    }
    assert.equal(allowed("ada", "delete", "projects", { name: "a" }), false);
    assert.ok(allowed("olga", "delete", "projects", { name: "a" }), "ownership is full control of the object");
  });

  it("decide() refuses non-members with a reason naming the project, and grants only listing outside project namespaces", () => {
    assert.deepEqual(ask("nobody", "create", "virtualclusterinstances", inA()), {
      allowed: false,
      reason: 'user "nobody" is not a member of project "a"',
    });
    assert.deepEqual(ask("ed", "create", "virtualclusterinstances", { namespace: "p-b" }), {
      allowed: false,
      reason: 'user "ed" is not a member of project "b"',
    });
    assert.deepEqual(ask("ed", "list", "virtualclusterinstances", { namespace: "default" }), { allowed: false });
    // Across namespaces a user lists and watches (the store narrows it to his projects); nothing else.
    assert.equal(allowed("ed", "list", "virtualclusterinstances"), true);
    assert.equal(allowed("nobody", "watch", "virtualclusterinstances"), true);
    assert.equal(
      allowed("ed", "get", "virtualclusterinstances"),
      false,
      "reading every instance needs the viewer role",
    );
    assert.equal(allowed("ed", "deletecollection", "virtualclusterinstances"), false);
    assert.equal(allowed("nobody", "get", "projects", { name: "a" }), false);
  });

  it("decide() keeps access key scopes in force for project members", () => {
    assert.deepEqual(ask("edOtherProject", "create", "virtualclusterinstances", inA()), {
      allowed: false,
      reason: "the access key's scope does not allow it",
    });
    assert.ok(allowed("edThisProject", "create", "virtualclusterinstances", inA()));
    assert.ok(allowed("edOneCluster", "patch", "virtualclusterinstances", inA({ name: "vc1" })));
    assert.equal(allowed("edOneCluster", "patch", "virtualclusterinstances", inA({ name: "vc2" })), false);
  });

  it("decide() gives a scoped key a kubeconfig only when its scope covers the whole instance", () => {
    const kubeconfig = inA({ name: "vc1", subresource: "kubeconfig" });
    assert.ok(allowed("edOneCluster", "create", "virtualclusterinstances", kubeconfig));
    assert.ok(allowed("edThisProject", "create", "virtualclusterinstances", kubeconfig));
    for (const who of ["edCli", "rootCli"]) {
      const decision = ask(who, "create", "virtualclusterinstances", kubeconfig);
      assert.equal(decision.allowed, false, who);
      assert.match(decision.reason ?? "", /a kubeconfig grants access to the whole virtual cluster/);
    }
    assert.ok(allowed("ed", "create", "virtualclusterinstances", kubeconfig), "an unscoped key");
  });

  it("authorize() sees a membership granted just before", async () => {
    const store = f.env.registry.genericStore(G, "projects")!;
    await store.create(
      platform(),
      undefined,
      {
        apiVersion: `${G}/v1`,
        kind: "Project",
        metadata: { name: "fresh" },
        spec: { members: [{ name: "nobody", clusterRole: "edit" }] },
      },
      {},
    );
    const decision = await f.authorizer.authorize({
      user: users.nobody,
      verb: "create",
      group: G,
      resource: "virtualclusterinstances",
      namespace: "p-fresh",
      resourceRequest: true,
    });
    assert.deepEqual(decision, { allowed: true });
  });
});
