import assert from "node:assert/strict";
import { test } from "node:test";
import { issuerOf, PlatformIssuers } from "./platform-issuers.ts";

const unknownIssuer = Object.assign(new Error("the token's issuer is not an address of this platform"), {
  reason: "unknown-issuer",
});

test("issuerOf() is the iss a platform at that address signs with", () => {
  assert.equal(issuerOf("127.0.0.1:8443"), "https://127.0.0.1:8443");
  assert.equal(issuerOf("https://platform.example.com/"), "https://platform.example.com");
});

test("PlatformIssuers keeps the connection's address and every one the platform announced, newest last", () => {
  const issuers = new PlatformIssuers(async () => {});
  issuers.learn("127.0.0.1:8443", "127.0.0.1:8443");
  issuers.learn("127.0.0.1:8443", "platform.example.com");
  assert.deepEqual(issuers.list(), ["https://127.0.0.1:8443", "https://platform.example.com"]);
  for (let i = 0; i < 20; i++) issuers.learn("127.0.0.1:8443", `p${i}.example.com`);
  assert.equal(issuers.list().length, 16);
  assert.ok(issuers.list().includes("https://127.0.0.1:8443"), "the connection's own address stays");
});

test("PlatformIssuers.verify() asks the platform once for an unknown issuer, at most every 10 s", async () => {
  let now = 0;
  let asked = 0;
  let accepted = false;
  const issuers = new PlatformIssuers(
    async () => {
      asked++;
      accepted = true;
    },
    () => now,
  );
  const verify = async () => {
    if (!accepted) throw unknownIssuer;
    return "ok";
  };
  assert.equal(await issuers.verify(verify), "ok");
  assert.equal(asked, 1);
  accepted = false;
  now += 5_000;
  await assert.rejects(issuers.verify(verify), /not an address of this platform/);
  assert.equal(asked, 1, "too soon to ask again");
  now += 5_000;
  assert.equal(await issuers.verify(verify), "ok");
  await assert.rejects(
    issuers.verify(async () => {
      throw Object.assign(new Error("expired"), { reason: "expired" });
    }),
    /expired/,
  );
  assert.equal(asked, 2, "other refusals never ask");
});
