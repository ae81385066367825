import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultRateLimiter, exponentialBackoff, maxOf, tokenBucket } from "./rate-limiter.ts";

test("exponentialBackoff() doubles per failure from 5 ms and caps at 1000 s", () => {
  const limiter = exponentialBackoff();
  const delays = Array.from({ length: 25 }, () => limiter.when("a"));
  assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
  assert.equal(delays[17], 5 * 2 ** 17);
  assert.equal(delays[18], 1_000_000);
  assert.equal(delays[24], 1_000_000);
  assert.equal(limiter.failures("a"), 25);
});

test("exponentialBackoff() counts keys separately and forget() starts a key over", () => {
  const limiter = exponentialBackoff(5, 1000);
  limiter.when("a");
  limiter.when("a");
  assert.equal(limiter.when("b"), 5);
  assert.equal(limiter.when("a"), 20);
  limiter.forget("a");
  assert.equal(limiter.failures("a"), 0);
  assert.equal(limiter.when("a"), 5);
});

test("tokenBucket() lets a burst through, then spaces retries at the refill rate", () => {
  let now = 0;
  const bucket = tokenBucket(10, 3, () => now);
  assert.deepEqual([bucket.when("a"), bucket.when("b"), bucket.when("c")], [0, 0, 0]);
  assert.equal(bucket.when("d"), 100);
  assert.equal(bucket.when("e"), 200);
  now = 1000; // 10 tokens refilled after two owed ones, but the bucket holds at most 3
  assert.deepEqual([bucket.when("f"), bucket.when("g"), bucket.when("h")], [0, 0, 0]);
  assert.equal(bucket.when("i"), 100);
});

test("maxOf() returns the larger delay and forgets in every limiter", () => {
  let now = 0;
  const limiter = maxOf(
    exponentialBackoff(5, 1000),
    tokenBucket(1, 1, () => now),
  );
  assert.equal(limiter.when("a"), 5);
  assert.equal(limiter.when("a"), 1000); // the bucket is empty: 1 s until the next token
  now = 10_000;
  assert.equal(limiter.when("a"), 20);
  limiter.forget("a");
  assert.equal(limiter.failures("a"), 0);
});

test("defaultRateLimiter() starts at 5 ms for a new key", () => {
  const limiter = defaultRateLimiter(() => 0);
  assert.equal(limiter.when("x"), 5);
  assert.equal(limiter.when("x"), 10);
});
