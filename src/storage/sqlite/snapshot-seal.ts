// A seal on a snapshot file: an HMAC-SHA256 over everything the database holds (its schema, and every row of every
// table in a fixed order), stored in the snapshot itself in one extra table, so the file stays a SQLite database
// any tool opens and anyone holding the key can tell whether it changed since it was sealed. The MAC covers the
// logical content, not the bytes: SQLite may lay pages out differently, but no row, table, index or trigger can be
// added, changed or removed unnoticed. The seal's own table is left out of the MAC; its fields are bound into it.

import { createHmac, type Hmac, timingSafeEqual } from "node:crypto";
import { DatabaseSync } from "node:sqlite";

/** The table holding the seal (one row). */
export const SEAL_TABLE = "snapshot_seal";
const SEAL_VERSION = 1;
const ALGORITHM = "HMAC-SHA256";

export interface SnapshotSeal {
  version: number;
  algorithm: string;
  /** Names the key the MAC was made with (never the key). */
  keyId: string;
  /** Hex. */
  mac: string;
}

export interface SealKey {
  id: string;
  secret: Uint8Array;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Tag and length of the value fed next: one buffer for all (a snapshot has millions of values). */
const header = Buffer.alloc(9);
const real = Buffer.alloc(8);

/** Feeds one value, typed and length-prefixed, so no two different rows give the same input. */
function feed(hmac: Hmac, value: unknown): void {
  if (typeof value === "string") {
    tagged(hmac, "t", Buffer.byteLength(value, "utf8"));
    hmac.update(value, "utf8");
  } else if (typeof value === "bigint") {
    const digits = value.toString();
    tagged(hmac, "i", digits.length);
    hmac.update(digits, "latin1");
  } else if (value === null) {
    tagged(hmac, "n", 0);
  } else if (typeof value === "number") {
    real.writeDoubleBE(value);
    tagged(hmac, "r", 8);
    hmac.update(real);
  } else if (value instanceof Uint8Array) {
    tagged(hmac, "b", value.length);
    hmac.update(value);
  } else {
    throw new Error(`unexpected SQLite value of type ${typeof value}`);
  }
}

function tagged(hmac: Hmac, tag: string, length: number): void {
  header[0] = tag.charCodeAt(0);
  header.writeUInt32BE(Math.floor(length / 2 ** 32), 1);
  header.writeUInt32BE(length >>> 0, 5);
  hmac.update(header);
}

/** The MAC of everything `db` holds but the seal, bound to the seal's version, algorithm and key id. */
function macOf(db: DatabaseSync, key: SealKey): string {
  const hmac = createHmac("sha256", key.secret);
  for (const value of ["virtualcluster-platform snapshot seal", SEAL_VERSION, ALGORITHM, key.id]) {
    feed(hmac, typeof value === "number" ? BigInt(value) : value);
  }
  const schema = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name <> ? ORDER BY type, name")
    .all(SEAL_TABLE);
  for (const entry of schema)
    for (const value of [entry.type, entry.name, entry.tbl_name, entry.sql]) feed(hmac, value);
  for (const entry of schema) {
    if (entry.type !== "table") continue;
    const table = String(entry.name);
    const columns = db.prepare("SELECT COUNT(*) AS n FROM pragma_table_info(?)").get(table) as { n: number | bigint };
    const count = Number(columns.n);
    feed(hmac, `table ${table}`);
    if (count === 0) continue;
    // Every column in order: a total order whatever the table's keys (a tie is two identical rows).
    const order = Array.from({ length: count }, (_, i) => i + 1).join(", ");
    const rows = db.prepare(`SELECT * FROM ${quote(table)} ORDER BY ${order}`);
    rows.setReadBigInts(true);
    rows.setReturnArrays(true);
    for (const row of rows.iterate() as Iterable<unknown[]>) {
      feed(hmac, "row");
      for (const value of row) feed(hmac, value);
    }
  }
  return hmac.digest("hex");
}

/** Seals the snapshot at `file` (a copy only its writer holds) with `key`. */
export function sealSnapshot(file: string, key: SealKey): SnapshotSeal {
  const db = new DatabaseSync(file, { timeout: 0 });
  try {
    db.exec(`DROP TABLE IF EXISTS ${SEAL_TABLE}`);
    const seal: SnapshotSeal = { version: SEAL_VERSION, algorithm: ALGORITHM, keyId: key.id, mac: macOf(db, key) };
    db.exec(
      `CREATE TABLE ${SEAL_TABLE} (version INTEGER NOT NULL, algorithm TEXT NOT NULL, key_id TEXT NOT NULL, mac TEXT NOT NULL)`,
    );
    db.prepare(`INSERT INTO ${SEAL_TABLE} VALUES (?, ?, ?, ?)`).run(seal.version, seal.algorithm, seal.keyId, seal.mac);
    return seal;
  } finally {
    db.close();
  }
}

/** The seal of the snapshot at `file`; undefined when it has none (made before seals, or a copied store file). */
export function readSnapshotSeal(file: string): SnapshotSeal | undefined {
  const db = new DatabaseSync(file, { readOnly: true, timeout: 0 });
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(SEAL_TABLE);
    if (!table) return undefined;
    const rows = db.prepare(`SELECT version, algorithm, key_id, mac FROM ${SEAL_TABLE}`).all();
    if (rows.length !== 1) return { version: 0, algorithm: "", keyId: "", mac: "" };
    const [row] = rows;
    return {
      version: Number(row.version),
      algorithm: String(row.algorithm),
      keyId: String(row.key_id),
      mac: String(row.mac),
    };
  } finally {
    db.close();
  }
}

/** Whether the snapshot at `file` holds exactly what `seal` was made over, under `key`. */
export function sealMatches(file: string, seal: SnapshotSeal, key: SealKey): boolean {
  if (seal.version !== SEAL_VERSION || seal.algorithm !== ALGORITHM || seal.keyId !== key.id) return false;
  const db = new DatabaseSync(file, { readOnly: true, timeout: 0 });
  try {
    const expected = Buffer.from(macOf(db, key), "hex");
    const given = Buffer.from(seal.mac, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  } finally {
    db.close();
  }
}

/** Removes the seal from a checked copy, leaving the store as it was sealed. */
export function removeSeal(file: string): void {
  const db = new DatabaseSync(file, { timeout: 0 });
  try {
    db.exec(`DROP TABLE IF EXISTS ${SEAL_TABLE}`);
  } finally {
    db.close();
  }
}
