// tokenGeneration "invalidates all tokens of the user" (issue 29 item 3), over HTTPS against the real platform, on the
// embedded store and on two replicas of one etcd (issued through one replica, checked at once through the other):
// one credential of every kind a user holds — a Login key, a User access key, a console session, a direct cluster
// endpoint token, the OpenID provider's refresh token and access token — works, stops working the moment the
// user's tokenGeneration is raised, and new ones work; disabling the user stops them all, and enabling it again
// brings back its access key and endpoint token but none of its sessions; new logins work.

import assert from "node:assert/strict";
import { request } from "node:https";
import { after, before, describe, it } from "node:test";
import * as client from "openid-client";
import { etcdMissing } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { AuthClient } from "./support/auth-client.ts";
import { caFetch } from "./support/ca-fetch.ts";
import { OidcRelyingParties } from "./support/oidc-relying-party.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { startPlatformReplicas } from "./support/platform-replicas.ts";
import { MGMT, setPlatformConfig } from "./support/sso-platform.ts";

const WIKI = { id: "wiki", secret: "wiki-client-s3cret-9c2e", redirect: "https://wiki.example.test/oauth" };
const USER = "gwen";
const PASSWORD = "gwen-password-1";

type Kind = "login key" | "access key" | "console session" | "endpoint token" | "refresh token" | "access token";
const KINDS: Kind[] = ["login key", "access key", "console session", "endpoint token", "refresh token", "access token"];
const SESSIONS: Kind[] = ["login key", "console session", "refresh token", "access token"];

/** One credential of each kind, issued together. */
type Family = Record<Kind, string>;

interface Replicas {
  /** Where credentials are issued and users changed. */
  issuing: PlatformProcess;
  /** Where they are checked (the other replica on etcd). */
  checking: PlatformProcess;
  adminKey: string;
}

/** A raw HTTPS request (the console's headers and cookies, which AuthClient does not send). */
function call(
  platform: PlatformProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${platform.url}${path}`,
      { method, ca: platform.caPem, agent: false, headers: { accept: "application/json", ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The console's password login: its key comes back as the session cookie only. */
async function consoleSession(platform: PlatformProcess): Promise<string> {
  const reply = await call(
    platform,
    "POST",
    "/auth/password/login",
    { "content-type": "application/json", "x-platform-console": "1" },
    { username: USER, password: PASSWORD },
  );
  const cookie = String(reply.headers["set-cookie"] ?? "").match(/vcp_session=([^;]+)/)?.[1];
  assert.equal(reply.status, 200);
  assert.ok(cookie);
  return cookie;
}

/** A console request: the session cookie with the console header. */
const withSession = (platform: PlatformProcess, method: string, path: string, session: string) =>
  call(platform, method, path, { cookie: `vcp_session=${session}`, "x-platform-console": "1" });

/** The suite, on the replicas `start` makes. */
function tokenFamilies(start: () => Promise<Replicas & { stop(): Promise<void> }>) {
  let replicas: Replicas & { stop(): Promise<void> };
  let issuing: AuthClient;
  let checking: AuthClient;
  let reviewer: string;
  let rps: OidcRelyingParties;
  let rp: client.Configuration;
  let counter = 0;

  const admin = (method: string, path: string, body?: unknown) =>
    issuing.send(method, path, {
      token: replicas.adminKey,
      body,
      contentType: method === "PATCH" ? "application/merge-patch+json" : undefined,
    });
  const setUser = async (spec: Record<string, unknown>) => {
    const reply = await admin("PATCH", `${MGMT}/users/${USER}`, { spec });
    assert.equal(reply.status, 200, reply.body);
  };

  /** The OpenID client, its token and userinfo calls sent to the checking replica (the issuer names the other). */
  const onChecking = (): client.Configuration => {
    const fetch = caFetch([replicas.checking.caPem]);
    const target = new URL(replicas.checking.url);
    const moved = rp;
    moved[client.customFetch] = (url, init) => {
      const to = new URL(url);
      to.host = target.host;
      return fetch(to.toString(), init);
    };
    return moved;
  };

  async function issueFamily(): Promise<Family> {
    counter++;
    const login = await issuing.login(USER, PASSWORD);
    assert.equal(login.status, 200, login.body);
    const session = await consoleSession(replicas.issuing);
    const accessKey = await issuing.createKey(replicas.adminKey, `gwen-key-${counter}`, { user: USER });
    const token = await issuing.send("POST", `${MGMT}/directclusterendpointtokens`, {
      token: accessKey,
      body: { apiVersion: "management.platform.sh/v1", kind: "DirectClusterEndpointToken", spec: { ttl: 600 } },
    });
    assert.equal(token.status, 201, token.body);
    const tokens = await rps.codeFlow(await rps.signedIn(USER, PASSWORD), rp, WIKI.redirect);
    assert.ok(tokens.refresh_token && tokens.access_token);
    return {
      "login key": login.json().accessKey,
      "access key": accessKey,
      "console session": session,
      "endpoint token": token.json().status.token,
      "refresh token": tokens.refresh_token,
      "access token": tokens.access_token,
    };
  }

  /** Whether a credential works now, asked of the checking replica. */
  async function works(kind: Kind, family: Family): Promise<boolean> {
    const credential = family[kind];
    const own = `${MGMT}/users/${USER}`;
    switch (kind) {
      case "login key":
      case "access key":
        return (await checking.send("GET", own, { token: credential })).status === 200;
      case "console session":
        return (await withSession(replicas.checking, "GET", own, credential)).status === 200;
      case "endpoint token": {
        const review = await checking.send("POST", `${MGMT}/selves`, {
          token: reviewer,
          body: { spec: { accessKey: credential } },
        });
        assert.ok([201, 400].includes(review.status), review.body);
        return review.status === 201;
      }
      case "refresh token":
        try {
          // Refresh tokens rotate: the family keeps the current one.
          const renewed = await client.refreshTokenGrant(onChecking(), credential);
          family["refresh token"] = renewed.refresh_token ?? credential;
          return true;
        } catch (error) {
          const e = error as { error?: string; cause?: { error?: string } };
          assert.equal(e.error ?? e.cause?.error, "invalid_grant", String(error));
          return false;
        }
      case "access token":
        return (await checking.send("GET", "/oidc/me", { token: credential })).status === 200;
    }
  }

  async function expect(family: Family, working: Kind[], when: string): Promise<void> {
    for (const kind of KINDS) {
      assert.equal(await works(kind, family), working.includes(kind), `${kind} ${when}`);
    }
  }

  before(async () => {
    replicas = await start();
    issuing = new AuthClient(replicas.issuing.url, replicas.issuing.caPem);
    checking = new AuthClient(replicas.checking.url, replicas.checking.caPem);
    await issuing.createUser(replicas.adminKey, USER, { clusterRoles: [{ name: "admin" }] });
    assert.equal((await issuing.setPassword(replicas.adminKey, USER, PASSWORD)).status, 201);
    reviewer = await issuing.createKey(replicas.adminKey, "token-reviewer", {
      user: "admin",
      scope: { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] },
    });
    await setPlatformConfig(
      { ...replicas.issuing, adminKey: replicas.adminKey },
      `platformHost: ${new URL(replicas.issuing.url).host}
oidc:
  clients:
  - name: Wiki
    clientId: ${WIKI.id}
    clientSecret: ${WIKI.secret}
    redirectURIs: [${WIKI.redirect}]
`,
    );
    rps = new OidcRelyingParties(replicas.issuing, issuing);
    rp = await rps.relyingParty(WIKI.id, WIKI.secret);
  });
  after(async () => {
    issuing?.close();
    checking?.close();
    await replicas?.stop();
  });

  it("raising tokenGeneration ends every credential of the user at once; new ones work", async () => {
    const before = await issueFamily();
    await expect(before, KINDS, "before the change");
    const current = (await admin("GET", `${MGMT}/users/${USER}`)).json().spec.tokenGeneration ?? 0;
    await setUser({ tokenGeneration: current + 1 });
    await expect(before, [], "issued before tokenGeneration was raised");
    const after = await issueFamily();
    await expect(after, KINDS, "issued after tokenGeneration was raised");
    // Lowering it would bring the old ones back: refused.
    const lower = await admin("PATCH", `${MGMT}/users/${USER}`, { spec: { tokenGeneration: current } });
    assert.equal(lower.status, 422, lower.body);
    assert.match(lower.json().message, /spec\.tokenGeneration.*may only be raised/);
    await expect(before, [], "after the refused lowering");
  });

  it("disabling the user ends its sessions for good; enabling it again brings back only its keys and tokens", async () => {
    const family = await issueFamily();
    await setUser({ disabled: true });
    await expect(family, [], "while the user is disabled");
    await setUser({ disabled: false });
    await expect(
      family,
      KINDS.filter((kind) => !SESSIONS.includes(kind)),
      "after the user was enabled again",
    );
    await expect(await issueFamily(), KINDS, "issued after the user was enabled again");
  });
}

describe("tokenGeneration on the embedded store", () => {
  tokenFamilies(async () => {
    const platform = await startPlatformProcess();
    return { issuing: platform, checking: platform, adminKey: platform.adminKey, stop: () => platform.stop() };
  });
});

describe("tokenGeneration on two replicas of one etcd", { skip: etcdMissing() }, () => {
  tokenFamilies(async () => {
    const started = await startPlatformReplicas({ replicas: 2 });
    const [issuing, checking] = started.replicas;
    return { issuing, checking, adminKey: started.adminKey, stop: () => started.stop() };
  });
});
