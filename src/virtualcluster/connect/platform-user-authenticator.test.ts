import assert from "node:assert/strict";
import { test } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import { DEFAULT_CACHE_MS, PlatformUserAuthenticator } from "./platform-user-authenticator.ts";

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
  const { review, calls } = reviewer({ "a.b.c": { user: { username: "carol" } } });
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
  assert.deepEqual(calls, ["a.b.c"], "a forged token never goes to the platform");
  const offline = new PlatformUserAuthenticator({ target: () => undefined, review });
  assert.equal(await offline.authenticate(request("good")), undefined);
});

test("PlatformUserAuthenticator.authenticate() refuses a token the platform revoked within DEFAULT_CACHE_MS, and keeps the offline verdict while the platform is unreachable", async () => {
  const clock = { now: 1_000_000 };
  let platform: "accepts" | "revoked" | "unreachable" = "accepts";
  const authenticator = new PlatformUserAuthenticator({
    target: () => target,
    now: () => clock.now,
    review: async () => {
      if (platform === "revoked") {
        throw Object.assign(new Error("token was revoked (the user's tokens were invalidated)"), { code: 400 });
      }
      if (platform === "unreachable") throw Object.assign(new Error("connect ECONNREFUSED"), { code: 503 });
      return { user: { username: "carol" } };
    },
    verifyToken: async () => ({ name: "carol", scope: { projects: [{ project: "default" }] } }),
  });
  assert.equal((await authenticator.authenticate(request("t.o.k")))?.name, "carol");
  platform = "revoked"; // the user's tokenGeneration was raised on the platform
  clock.now += DEFAULT_CACHE_MS - 1;
  assert.equal((await authenticator.authenticate(request("t.o.k")))?.name, "carol", "still within the bound");
  clock.now += 1;
  await assert.rejects(
    authenticator.authenticate(request("t.o.k")),
    (error) => isStatusError(error) && error.code === 401 && /revoked/.test(error.message),
  );
  platform = "unreachable";
  clock.now += DEFAULT_CACHE_MS;
  assert.equal(
    (await authenticator.authenticate(request("t.o.k")))?.name,
    "carol",
    "the direct endpoint works offline",
  );
});

test("PlatformUserAuthenticator.authenticate() stops trusting a key the platform disabled within DEFAULT_CACHE_MS", async () => {
  const answers: Record<string, object> = { key: { user: { username: "alice" } } };
  const { review, calls } = reviewer(answers);
  const clock = { now: 1_000_000 };
  const authenticator = new PlatformUserAuthenticator({ target: () => target, review, now: () => clock.now });
  assert.equal((await authenticator.authenticate(request("key")))?.name, "alice");
  delete answers.key; // disabled or deleted on the platform: its review now fails with 401
  clock.now += DEFAULT_CACHE_MS - 1;
  assert.equal((await authenticator.authenticate(request("key")))?.name, "alice", "still within the bound");
  clock.now += 1;
  assert.equal(await authenticator.authenticate(request("key")), undefined, "asked again, and refused");
  assert.equal(calls.length, 2);
  assert.ok(DEFAULT_CACHE_MS <= 5_000, "the bound the docs state");
});

test("PlatformUserAuthenticator.authenticate() never trusts a key past the expiration the platform reports", async () => {
  const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
  const expiring = { user: { username: "alice" }, accessKeyExpirationTimestamp: "2026-01-01T00:00:01Z" };
  const { review, calls } = reviewer({ key: expiring });
  const authenticator = new PlatformUserAuthenticator({ target: () => target, review, now: () => clock.now });
  await authenticator.authenticate(request("key"));
  clock.now += 1_000; // the key's end, well inside the cache bound
  await authenticator.authenticate(request("key"));
  assert.equal(calls.length, 2, "reviewed again at the key's expiry, not answered from the cache");
});

test("PlatformUserAuthenticator.authenticate() never trusts a token a moment past its exp", async () => {
  const clock = { now: 1_700_000_000_000 };
  const exp = clock.now / 1000 + 1;
  const verified: string[] = [];
  const authenticator = new PlatformUserAuthenticator({
    target: () => target,
    review: async () => ({}),
    verifyToken: async (token) => {
      verified.push(token);
      if (clock.now >= exp * 1000) throw new Error("the token has expired");
      return { name: "bob", exp };
    },
    now: () => clock.now,
  });
  const token = "aaa.bbb.ccc";
  assert.equal((await authenticator.authenticate(request(token)))?.name, "bob");
  clock.now += 1_000;
  await assert.rejects(authenticator.authenticate(request(token)), /expired/);
  assert.equal(verified.length, 2, "verified again at exp instead of answered from the cache");
});
