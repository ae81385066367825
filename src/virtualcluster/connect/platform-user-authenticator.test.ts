import assert from "node:assert/strict";
import { test } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import { PlatformUserAuthenticator } from "./platform-user-authenticator.ts";

const target = { project: "default", name: "vc1" };
const request = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

function reviewer(answers: Record<string, object>) {
  const calls: string[] = [];
  const review = async (credential: string) => {
    calls.push(credential);
    const answer = answers[credential];
    if (!answer) throw Object.assign(new Error("Unauthorized"), { code: 401 });
    return answer;
  };
  return { calls, review };
}

test("PlatformUserAuthenticator.authenticate() maps a reviewed key to an administrator of the virtual cluster", async () => {
  const { review, calls } = reviewer({ good: { user: { username: "alice" }, uid: "u1", groups: ["team-a"] } });
  const authenticator = new PlatformUserAuthenticator({ target: () => target, review });
  const user = await authenticator.authenticate(request("good"));
  assert.equal(user?.name, "alice");
  assert.ok(user?.groups.includes("system:masters"));
  assert.ok(user?.groups.includes("team-a"));
  await authenticator.authenticate(request("good"));
  assert.equal(calls.length, 1, "the second request is answered from the cache");
});

test("PlatformUserAuthenticator.authenticate() leaves unknown keys to other authenticators and refuses foreign scopes", async () => {
  const { review } = reviewer({
    scoped: {
      user: { username: "bob" },
      accessKeyScope: { virtualClusters: [{ project: "default", virtualCluster: "vc2" }] },
    },
  });
  const authenticator = new PlatformUserAuthenticator({ target: () => target, review });
  assert.equal(await authenticator.authenticate(request("unknown")), undefined);
  await assert.rejects(
    authenticator.authenticate(request("scoped")),
    (error) => isStatusError(error) && error.code === 401 && error.message.includes("virtual cluster vc1"),
  );
});

test("PlatformUserAuthenticator.authenticate() verifies JWTs offline and does nothing while disconnected", async () => {
  const { review, calls } = reviewer({});
  const authenticator = new PlatformUserAuthenticator({
    target: () => target,
    review,
    verifyToken: async (token) => {
      if (token !== "a.b.c") throw new Error("signature verification failed");
      return { name: "carol", scope: { projects: [{ project: "default" }] } };
    },
  });
  assert.equal((await authenticator.authenticate(request("a.b.c")))?.name, "carol");
  await assert.rejects(
    authenticator.authenticate(request("a.b.d")),
    (error) => isStatusError(error) && error.code === 401,
  );
  assert.equal(calls.length, 0, "tokens never go to the platform");
  const offline = new PlatformUserAuthenticator({ target: () => undefined, review });
  assert.equal(await offline.authenticate(request("good")), undefined);
});
