import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import type { ImpersonationRequest } from "../http/impersonation.ts";
import type { UserInfo } from "../registry/types.ts";
import { platformImpersonation } from "./impersonated-caller.ts";
import { principalOf } from "./principal.ts";
import { type AuthFixture, openAuthFixture } from "./testing.ts";

describe("platformImpersonation()", () => {
  let fixture: AuthFixture;
  let admin: UserInfo;
  let scopedAdmin: UserInfo;

  before(async () => {
    fixture = await openAuthFixture();
    await fixture.createUser("root", { clusterRoles: [{ name: "admin" }] });
    await fixture.createUser("dave", { groups: ["devs"] });
    await fixture.createUser("gone", { disabled: true });
    await fixture.createTeam("ops", { groups: ["ops"], clusterRoles: [{ name: "viewer" }] });
    admin = (await fixture.contextOf(await fixture.createKey("root-key", { user: "root" }))).user;
    const scoped = await fixture.createKey("root-scoped", {
      user: "root",
      scope: { rules: [{ verbs: ["get"], resources: [{ group: GROUP, resources: ["users"] }] }] },
    });
    scopedAdmin = (await fixture.contextOf(scoped)).user;
  });
  after(() => fixture?.close());

  const impersonate = async (request: ImpersonationRequest, by = admin): Promise<UserInfo> =>
    platformImpersonation({ index: fixture.index, fresh: () => fixture.informer.fresh() })(request, by);
  const may = (user: UserInfo, verb: string, resource: string, name?: string) =>
    fixture.authorizer.decide({ user, verb, group: GROUP, version: "v1", resource, name, resourceRequest: true })
      .allowed;

  it("platformImpersonation() makes a platform user the caller, with his groups and rights", async () => {
    const dave = await impersonate({ user: "dave" });
    assert.equal(dave.name, "dave");
    assert.ok(dave.groups.includes("devs") && dave.groups.includes("system:authenticated"));
    assert.equal(principalOf(dave)?.user?.name, "dave");
    assert.equal(may(dave, "get", "users", "dave"), true);
    assert.equal(may(dave, "list", "users"), false);
    assert.equal(may(dave, "create", "projects"), false);
  });

  it("platformImpersonation() takes requested groups as the whole list: a team through its group", async () => {
    const inOps = await impersonate({ user: "dave", groups: ["ops", "system:masters"] });
    assert.deepEqual([...inOps.groups].sort(), ["ops", "system:authenticated"]);
    assert.equal(may(inOps, "list", "users"), true, "the ops team's viewer role");
    const team = await impersonate({ user: "team:ops" });
    assert.equal(team.name, "team:ops");
    assert.equal(may(team, "list", "users"), true);
  });

  it("platformImpersonation() gives an unknown name no rights, and refuses a disabled user or a wrong uid", async () => {
    const nobody = await impersonate({ user: "system:serviceaccount:ns:a", uid: "x" });
    assert.equal(nobody.uid, "x");
    assert.equal(may(nobody, "get", "users", "dave"), false);
    const refused = (error: unknown, pattern: RegExp) =>
      isStatusError(error) && error.code === 403 && pattern.test(error.message);
    await assert.rejects(impersonate({ user: "gone" }), (error) => refused(error, /the user is disabled/));
    await assert.rejects(impersonate({ user: "dave", uid: "nope" }), (error) =>
      refused(error, /not the uid of user "dave"/),
    );
  });

  it("platformImpersonation() keeps the impersonator's key scope on the impersonated caller", async () => {
    const root = await impersonate({ user: "root" }, scopedAdmin);
    assert.equal(may(root, "get", "users", "dave"), true);
    assert.equal(may(root, "delete", "users", "dave"), false, "root may, the key's scope may not");
  });
});
