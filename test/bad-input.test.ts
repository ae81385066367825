// Bad input over real HTTPS: whatever a client sends, the answer is a Kubernetes Status with a 4xx code (never a
// 500, never a crash) and a failed write stores nothing.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";

const USERS = "/apis/management.platform.sh/v1/users";

interface Reply {
  status: number;
  body: string;
}

describe("bad input", () => {
  let dataDir: string;
  let platform: RunningPlatform;
  let ca: string;
  let key: string;

  const send = (method: string, path: string, body?: string | Buffer, contentType = "application/json") =>
    new Promise<Reply>((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (body !== undefined) headers["content-type"] = contentType;
      const req = request(`${platform.url}${path}`, { method, ca, headers }, (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", reject);
      req.end(body);
    });

  const userCount = async () => JSON.parse((await send("GET", USERS)).body).items.length as number;

  const assertClientError = (reply: Reply, what: string) => {
    assert.ok(reply.status >= 400 && reply.status < 500, `${what}: expected 4xx, got ${reply.status} ${reply.body}`);
    const status = JSON.parse(reply.body);
    assert.equal(status.kind, "Status", what);
    assert.equal(status.code, reply.status, what);
    assert.ok(status.message, what);
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-bad-input-"));
    platform = await startPlatform({ dataDir, host: "127.0.0.1", port: 0 });
    ca = await readFile(join(dataDir, "pki", "ca.crt"), "utf8");
    key = (await readFile(join(dataDir, "admin-access-key"), "utf8")).trim();
  });
  after(async () => {
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("random JSON bodies posted as users get a 4xx Status or a 201, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const reply = await send("POST", `${USERS}?fieldValidation=Strict`, JSON.stringify(value));
        if (reply.status !== 201) assertClientError(reply, JSON.stringify(value));
      }),
      { numRuns: 150 },
    );
  });

  it("random user-shaped objects get a 4xx Status or a 201, and failures store nothing", async () => {
    const userLike = fc.record(
      {
        apiVersion: fc.constantFrom("management.platform.sh/v1", "v1", "management.platform.sh/v2", ""),
        kind: fc.constantFrom("User", "Team", ""),
        metadata: fc.record(
          {
            name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.string({ maxLength: 300 })),
            labels: fc.dictionary(fc.string({ maxLength: 70 }), fc.oneof(fc.string({ maxLength: 70 }), fc.integer())),
            finalizers: fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }),
            resourceVersion: fc.constantFrom("1", "abc"),
          },
          { requiredKeys: [] },
        ),
        spec: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record(
            {
              email: fc.oneof(fc.string(), fc.integer()),
              disabled: fc.oneof(fc.boolean(), fc.string()),
              tokenGeneration: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.string()),
              clusterRoles: fc.array(fc.record({ name: fc.oneof(fc.string(), fc.integer()) }), { maxLength: 2 }),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(userLike, async (object) => {
        const before = await userCount();
        const reply = await send("POST", USERS, JSON.stringify(object));
        if (reply.status === 201) return;
        assertClientError(reply, JSON.stringify(object));
        assert.equal(await userCount(), before, "a failed create stored nothing");
      }),
      { numRuns: 150 },
    );
  });

  it("numbers out of range, invalid UTF-8 and a dry-run create of a taken name are refused as Kubernetes does", async () => {
    const before = await userCount();
    const keys = "/apis/management.platform.sh/v1/ownedaccesskeys";
    const huge = await send(
      "POST",
      keys,
      '{"apiVersion":"management.platform.sh/v1","kind":"OwnedAccessKey","metadata":{"name":"forever"},"spec":{"user":"admin","ttl":1e400}}',
    );
    assert.equal(huge.status, 422, huge.body);
    assert.equal(JSON.parse(huge.body).details.causes[0].field, "spec.ttl");
    assert.equal((await send("GET", `${keys}/forever`)).status, 404, "nothing was stored");
    const yamlInf = await send(
      "POST",
      USERS,
      "apiVersion: management.platform.sh/v1\nkind: User\nmetadata: {name: inf}\nspec: {tokenGeneration: .inf}\n",
      "application/yaml",
    );
    assert.equal(yamlInf.status, 422, yamlInf.body);
    assert.match(JSON.parse(yamlInf.body).message, /spec\.tokenGeneration: Invalid value: "Infinity"/);
    const broken = Buffer.concat([
      Buffer.from(
        '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"bad-utf8"},"spec":{"displayName":"',
      ),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}}'),
    ]);
    const utf8 = await send("POST", USERS, broken);
    assert.equal(utf8.status, 400, utf8.body);
    assert.match(JSON.parse(utf8.body).message, /not valid UTF-8/);
    const admin = '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"admin"},"spec":{}}';
    const dryRun = await send("POST", `${USERS}?dryRun=All`, admin);
    assert.equal(dryRun.status, 409, dryRun.body);
    assert.equal(JSON.parse(dryRun.body).reason, "AlreadyExists");
    assert.equal(await userCount(), before);
  });

  it("free text and annotations are bounded: a description, display name or annotations past their limit are 422", async () => {
    const user = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) =>
      JSON.stringify({ apiVersion: "management.platform.sh/v1", kind: "User", metadata: { name, annotations }, spec });
    const long = await send("POST", USERS, user("wordy", { description: "d".repeat(16_385) }));
    assert.equal(long.status, 422, long.body);
    assert.match(JSON.parse(long.body).message, /spec\.description: Too long: may not be more than 16384/);
    const name = await send("POST", USERS, user("wordy", { displayName: "n".repeat(257) }));
    assert.equal(JSON.parse(name.body).details.causes[0].field, "spec.displayName");
    const annotated = await send("POST", USERS, user("wordy", {}, { a: "x".repeat(256 * 1024) }));
    assert.equal(annotated.status, 422, annotated.body);
    assert.match(JSON.parse(annotated.body).message, /metadata\.annotations: Too long: must have at most 262144 bytes/);
    const atLimits = await send(
      "POST",
      USERS,
      user(
        "wordy",
        { description: "d".repeat(16_384), displayName: "n".repeat(256) },
        { a: "x".repeat(256 * 1024 - 1) },
      ),
    );
    assert.equal(atLimits.status, 201, "the limits themselves are allowed");
    // A large object is read whole, again and again (its answer is kept encoded between reads).
    for (let i = 0; i < 2; i++) {
      const read = await send("GET", `${USERS}/wordy`);
      assert.equal(read.status, 200);
      assert.equal(JSON.parse(read.body).metadata.annotations.a.length, 256 * 1024 - 1);
    }
  });

  it("a lone UTF-16 surrogate in any string field is 422 naming the field, by create, patch and YAML; nothing is stored", async () => {
    const lone = await send(
      "POST",
      USERS,
      '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"lone"},"spec":{"displayName":"a\\ud800b"}}',
    );
    assert.equal(lone.status, 422, lone.body);
    const status = JSON.parse(lone.body);
    assert.equal(status.details.causes[0].field, "spec.displayName");
    assert.match(status.message, /spec\.displayName: Invalid value: "a\\ud800b": must be valid Unicode/);
    assert.equal((await send("GET", `${USERS}/lone`)).status, 404, "nothing was stored");
    const pair = await send(
      "POST",
      USERS,
      '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"paired"},"spec":{"displayName":"\\ud83d\\ude00"}}',
    );
    assert.equal(pair.status, 201, "a surrogate pair is one character (an emoji)");
    assert.equal(JSON.parse(pair.body).spec.displayName, "\u{1F600}");
    const patched = await send(
      "PATCH",
      `${USERS}/paired`,
      '{"metadata":{"annotations":{"note":"\\udc00"}}}',
      "application/merge-patch+json",
    );
    assert.equal(patched.status, 422, patched.body);
    assert.equal(JSON.parse(patched.body).details.causes[0].field, "metadata.annotations[note]");
    const yaml = await send(
      "POST",
      USERS,
      'apiVersion: management.platform.sh/v1\nkind: User\nmetadata: {name: lone-yaml}\nspec: {description: "\\ud800"}\n',
      "application/yaml",
    );
    assert.equal(yaml.status, 422, yaml.body);
    assert.equal(JSON.parse(yaml.body).details.causes[0].field, "spec.description");
  });

  it("integers beyond their int64 field or JavaScript's exact integers are 422 naming the field; the bound itself is taken", async () => {
    const keys = "/apis/management.platform.sh/v1/ownedaccesskeys";
    const key = (name: string, ttl: string) =>
      `{"apiVersion":"management.platform.sh/v1","kind":"OwnedAccessKey","metadata":{"name":"${name}"},"spec":{"user":"admin","displayName":"${name}","ttl":${ttl}}}`;
    for (const ttl of ["9007199254740992", "1e20"]) {
      const reply = await send("POST", keys, key("too-long", ttl));
      assert.equal(reply.status, 422, reply.body);
      const cause = JSON.parse(reply.body).details.causes[0];
      assert.equal(cause.field, "spec.ttl");
      assert.match(cause.message, /should be less than or equal to 9007199254740991 \(int64/);
      assert.equal((await send("GET", `${keys}/too-long`)).status, 404, "nothing was stored");
    }
    const created = await send("POST", keys, key("longest", "9007199254740991"));
    assert.equal(created.status, 201, created.body);
    // Its end is past any date a timestamp can say: reviewing it answers without one (it was a 500).
    const plain = JSON.parse(created.body).spec.key;
    const review = await new Promise<Reply>((resolve, reject) => {
      const req = request(
        `${platform.url}/apis/management.platform.sh/v1/selves`,
        { method: "POST", ca, headers: { authorization: `Bearer ${plain}`, "content-type": "application/json" } },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.end('{"apiVersion":"management.platform.sh/v1","kind":"Self"}');
    });
    assert.equal(review.status, 201, review.body);
    assert.equal(JSON.parse(review.body).status.accessKeyExpirationTimestamp, undefined);
    const user = await send(
      "POST",
      `${USERS}?dryRun=All`,
      '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"gen"},"spec":{"tokenGeneration":9007199254740992}}',
    );
    assert.equal(user.status, 422, user.body);
    assert.equal(JSON.parse(user.body).details.causes[0].field, "spec.tokenGeneration");
  });

  it("malformed bodies, patches and parameters get the right Status codes", async () => {
    const cases: [string, Promise<Reply>, number][] = [
      ["truncated JSON", send("POST", USERS, '{"apiVersion":'), 400],
      ["bad YAML", send("POST", USERS, "a: [b", "application/yaml"), 400],
      ["a JSON array", send("POST", USERS, "[1,2]"), 400],
      ["unknown content type", send("POST", USERS, "x", "text/plain"), 415],
      ["strategic merge patch", send("PATCH", `${USERS}/admin`, "{}", "application/strategic-merge-patch+json"), 415],
      ["JSON patch not a list", send("PATCH", `${USERS}/admin`, '{"op":"add"}', "application/json-patch+json"), 400],
      [
        "failing JSON patch test",
        send(
          "PATCH",
          `${USERS}/admin`,
          '[{"op":"test","path":"/spec/email","value":"no"}]',
          "application/json-patch+json",
        ),
        422,
      ],
      ["bad label selector", send("GET", `${USERS}?labelSelector=a%20in%20(`), 400],
      ["unsupported field selector", send("GET", `${USERS}?fieldSelector=spec.foo%3Dx`), 400],
      ["forged continue token", send("GET", `${USERS}?limit=1&continue=Zm9yZ2Vk`), 400],
      ["bad limit", send("GET", `${USERS}?limit=x`), 400],
      ["unknown resource", send("GET", "/apis/management.platform.sh/v1/nothings"), 404],
      ["unknown group", send("GET", "/apis/nothing.example.com/v1/things"), 404],
      ["oversized body", send("POST", USERS, Buffer.alloc(3 * 1024 * 1024 + 1, 32)), 413],
    ];
    for (const [what, pending, code] of cases) {
      const reply = await pending;
      assertClientError(reply, what);
      assert.equal(reply.status, code, `${what}: ${reply.body}`);
    }
  });
});
