// UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Audit IDs are these, so the audit
// datastore's index of them grows at its end like the time index does, instead of taking every insert at a random
// page (which cost more than half of an event's insert). Random bytes come from a pool refilled 256 IDs at a time.

import { randomFillSync } from "node:crypto";

const POOL_IDS = 256;
const pool = Buffer.alloc(POOL_IDS * 10);
let used = POOL_IDS;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The time part of the last millisecond an ID was made in ("xxxxxxxx-xxxx-"): formatting it costs most of an ID. */
let lastMs = -1;
let lastTime = "";

/** A new UUIDv7 string; IDs made in one millisecond share its first 12 hex digits. */
export function timeOrderedUuid(now = Date.now()): string {
  if (used === POOL_IDS) {
    randomFillSync(pool);
    used = 0;
  }
  const r = used++ * 10;
  if (now !== lastMs) {
    const time = now.toString(16).padStart(12, "0").slice(-12);
    lastTime = `${time.slice(0, 8)}-${time.slice(8)}-`;
    lastMs = now;
  }
  const a = HEX[0x70 | (pool[r] & 0x0f)] + HEX[pool[r + 1]];
  const b = HEX[0x80 | (pool[r + 2] & 0x3f)] + HEX[pool[r + 3]];
  let c = "";
  for (let i = 4; i < 10; i++) c += HEX[pool[r + i]];
  return `${lastTime}${a}-${b}-${c}`;
}
