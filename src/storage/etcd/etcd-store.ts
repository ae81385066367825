// The KeyValueStore on etcd, for several platform replicas on one etcd cluster (the kube-apiserver way).
//
// Revisions are etcd's revisions, counted from the revision at which this prefix was first used (the `meta/base`
// key): store revision = etcd revision - base, so an empty prefix starts at 0 as SQLite does, and resourceVersions
// keep etcd's order across replicas. create/update/delete are one etcd transaction each, comparing the key's create
// or mod revision (If(...) Then(put|delete) Else(range)), so optimistic concurrency holds across replicas.
//
// Watching: each store keeps ONE etcd watch on the whole keyspace (the feed). Its events under the prefix go to an
// in-process WatchHub (the same fan-out, buffers and slow-watcher cut-off as SQLite's) and into a window of recent
// events that serves watches starting a little in the past; a watch older than the window opens an etcd watch of
// its own. Because the feed sees every etcd revision, including writes that are not the store's (leader election
// records, other tenants), the store can tell which revision its keys last changed at: currentRevision() and a list's
// revision report that revision (the data at the etcd header revision is the same), so a client or informer that
// waits for "the current revision" waits only for events it will actually receive.

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import {
  type KeyValueStore,
  type ListOptions,
  type ListResult,
  StorageError,
  type StoredRecord,
  type WatchEvent,
  type Watcher,
  type WatchOptions,
} from "../types.ts";
import { WatchHub } from "../watch-hub.ts";
import {
  EtcdClient,
  type EtcdHeader,
  type EtcdKeyValue,
  EtcdResponseError,
  type EtcdTls,
  fromBase64,
  toBase64,
} from "./etcd-client.ts";
import { EtcdKeyspace } from "./etcd-keyspace.ts";
import { type EtcdWatchEvent, EtcdWatchStream } from "./etcd-watch-stream.ts";
import { EventWindow } from "./event-window.ts";
import { LinearizableRevisions } from "./linearizable-revisions.ts";

export interface EtcdStoreOptions {
  /** Client URLs of the etcd members (--etcd-endpoints). */
  endpoints: string[];
  /** CA and client certificate (PEM) for https endpoints (--etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  tls?: EtcdTls;
  /** Key prefix in etcd (--etcd-prefix, default /virtualcluster-platform). */
  prefix?: string;
  /** Events a watcher may have queued before it is cut off as slow (default 10,000). */
  watchBufferLimit?: number;
  /** Recent events kept in memory for watches that start in the past (default 20,000). */
  historyWindow?: number;
  /** How long a call may take before it fails with Unavailable (default 5 s). */
  requestTimeoutMs?: number;
}

interface RangeResponse {
  header?: EtcdHeader;
  kvs?: EtcdKeyValue[];
  count?: string;
  more?: boolean;
}

interface TxnResponse {
  header?: EtcdHeader;
  succeeded?: boolean;
  responses?: {
    response_range?: RangeResponse;
    response_put?: { prev_kv?: EtcdKeyValue };
    response_delete_range?: { prev_kvs?: EtcdKeyValue[] };
  }[];
}

/** Own writes kept for the feed at most (a feed that stalls stops the keeping, not the writes). */
const WRITTEN_LIMIT = 10_000;
/** The feed's latest records kept for answers that come after their events. */
const FED_KEPT = 512;

/** The whole etcd keyspace: the feed must see every revision (see the header). */
const ALL_KEYS = Uint8Array.of(0);

export async function openEtcdStore(options: EtcdStoreOptions): Promise<EtcdStore> {
  const client = new EtcdClient({
    endpoints: options.endpoints,
    tls: options.tls,
    requestTimeoutMs: options.requestTimeoutMs,
  });
  try {
    const keys = new EtcdKeyspace(options.prefix);
    const baseKey = toBase64(keys.base);
    // The first replica to use the prefix writes the base record; everyone else reads its revision.
    const answer = await client.call<TxnResponse>("/v3/kv/txn", {
      compare: [{ key: baseKey, target: "CREATE", result: "EQUAL", create_revision: "0" }],
      success: [{ request_put: { key: baseKey, value: toBase64("") } }],
      failure: [{ request_range: { key: baseKey } }],
    });
    const opened = revisionOf(answer.header);
    const base = answer.succeeded
      ? opened
      : Number(answer.responses?.[0]?.response_range?.kvs?.[0]?.create_revision ?? opened);
    const compacted = await etcdCompactedRevision(client, keys);
    return new EtcdStore({ options, client, keys, base, opened, compacted });
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** The revision etcd compacted to (0 if never), asked by watching from revision 1 (etcd answers with it). */
export function etcdCompactedRevision(client: EtcdClient, keys: EtcdKeyspace): Promise<number> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const probe = toBase64(`${keys.prefix}/meta/probe`);
    const stream = client.stream(
      "/v3/watch",
      { create_request: { key: probe, start_revision: "1" } },
      {
        onMessage: (message) => {
          if (settled) return;
          settled = true;
          stream.close();
          resolve(Number((message as { compact_revision?: string }).compact_revision ?? 0));
        },
        onEnd: (error) => {
          if (settled) return;
          settled = true;
          reject(new StorageError("Unavailable", `etcd is unavailable: ${error?.message ?? "the watch ended"}`));
        },
      },
    );
  });
}

interface Waiter {
  revision: number;
  resolve(): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

interface Parts {
  options: EtcdStoreOptions;
  client: EtcdClient;
  keys: EtcdKeyspace;
  /** etcd revision that is the store's revision 0. */
  base: number;
  /** etcd revision when the store opened: the feed starts after it. */
  opened: number;
  /** etcd's compacted revision when the store opened. */
  compacted: number;
}

export class EtcdStore implements KeyValueStore {
  readonly client: EtcdClient;
  readonly keys: EtcdKeyspace;
  private readonly base: number;
  private readonly hub: WatchHub;
  private readonly window: EventWindow;
  private readonly timeoutMs: number;
  private readonly direct = new Set<DirectWatch>();
  private feed: EtcdWatchStream;
  /** etcd revision the feed has passed on every event up to. */
  private position: number;
  private waiters: Waiter[] = [];
  /** Newest store revision this replica wrote or reported (where a watch "from now" starts). */
  private lastSeen: number;
  private compacted: number;
  private closed = false;
  private readonly revisions: LinearizableRevisions;
  /**
   * The writer of a key and its watchers get the very same record object, whichever of the write's answer and the
   * feed's event comes first, so the registry decodes it once for all (as with SQLite) and the feed need not decode
   * its value: `written` holds answers the feed has not brought yet, `fedRecords` the last records the feed brought,
   * both by etcd revision.
   */
  private readonly written = new Map<number, StoredRecord>();
  private readonly fedRecords = new Map<number, StoredRecord>();

  constructor(parts: Parts) {
    this.client = parts.client;
    this.keys = parts.keys;
    this.base = parts.base;
    this.timeoutMs = parts.options.requestTimeoutMs ?? 5_000;
    this.position = parts.opened;
    this.lastSeen = parts.opened - parts.base;
    this.compacted = Math.max(0, parts.compacted - parts.base);
    this.window = new EventWindow({
      capacity: parts.options.historyWindow ?? 20_000,
      floor: parts.opened - parts.base,
    });
    this.hub = new WatchHub({
      bufferLimit: parts.options.watchBufferLimit ?? 10_000,
      source: {
        revision: () => this.position - this.base,
        compactedRevision: () => this.compacted,
        history: (prefix, after, limit) => this.window.after(prefix, after, limit),
      },
    });
    this.revisions = new LinearizableRevisions({
      read: () => this.client.call<RangeResponse>("/v3/kv/range", { key: toBase64(this.keys.base), count_only: true }),
    });
    this.feed = this.startFeed(parts.opened + 1);
  }

  /** The newest revision at which a key of this store changed, as of a linearizable call made after this one. */
  async currentRevision(): Promise<number> {
    this.ensureOpen();
    return this.reportedRevision(await this.revisions.next());
  }

  async compactedRevision(): Promise<number> {
    this.ensureOpen();
    return this.compacted;
  }

  async get(key: string): Promise<StoredRecord | undefined> {
    this.ensureOpen();
    const answer = await this.call<RangeResponse>("/v3/kv/range", { key: toBase64(this.keys.key(key)) });
    const kv = answer.kvs?.[0];
    return kv ? this.recordOf(key, kv) : undefined;
  }

  async list(options: ListOptions): Promise<ListResult> {
    this.ensureOpen();
    const { prefix, startAfter } = options;
    const requested = options.revision ?? 0;
    if (requested > 0 && requested < this.compacted) throw this.compactedError(requested);
    const range = this.keys.range(prefix);
    let from = range.key;
    if (startAfter !== undefined && compareUtf8(startAfter, prefix) >= 0) {
      if (!startAfter.startsWith(prefix))
        return { records: [], revision: await this.listRevision(requested), remaining: 0 };
      from = Buffer.concat([Buffer.from(this.keys.key(startAfter), "utf8"), Buffer.of(0)]);
    }
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const request = {
      key: toBase64(from),
      range_end: toBase64(range.end),
      ...(limit > 0 ? { limit: String(limit) } : {}),
      ...(requested > 0 ? { revision: String(requested + this.base) } : {}),
    };
    let answer: RangeResponse;
    try {
      answer = await this.call<RangeResponse>("/v3/kv/range", request);
    } catch (error) {
      if (isFutureRevision(error)) return this.list({ ...options, revision: 0 });
      throw error;
    }
    const kvs = answer.kvs ?? [];
    const records = kvs.map((kv) => this.recordOf(undefined, kv));
    const revision = requested > 0 ? requested : await this.reportedRevision(revisionOf(answer.header));
    const remaining = limit > 0 ? Math.max(0, Number(answer.count ?? 0) - kvs.length) : 0;
    return { records, revision, remaining };
  }

  async count(prefix: string): Promise<number> {
    this.ensureOpen();
    const range = this.keys.range(prefix);
    const answer = await this.call<RangeResponse>("/v3/kv/range", {
      key: toBase64(range.key),
      range_end: toBase64(range.end),
      count_only: true,
    });
    return Number(answer.count ?? 0);
  }

  async create(key: string, value: string): Promise<StoredRecord> {
    this.ensureOpen();
    const etcdKey = toBase64(this.keys.key(key));
    const attempt = { ambiguous: false };
    const answer = await this.txn(
      {
        compare: [{ key: etcdKey, target: "CREATE", result: "EQUAL", create_revision: "0" }],
        success: [{ request_put: { key: etcdKey, value: toBase64(value) } }],
        failure: [{ request_range: { key: etcdKey } }],
      },
      attempt,
    );
    if (answer.succeeded) {
      const revision = this.seen(revisionOf(answer.header) - this.base);
      return this.wrote({ key, value, revision, createRevision: revision });
    }
    const current = this.currentOf(key, answer);
    // An earlier try whose answer was lost did write it: the value is ours (values carry a uid and timestamps).
    if (attempt.ambiguous && current?.value === value) return current;
    throw new StorageError("KeyExists", `key ${key} already exists`, { current });
  }

  async update(key: string, value: string, expectedRevision: number): Promise<StoredRecord> {
    this.ensureOpen();
    const etcdKey = toBase64(this.keys.key(key));
    const attempt = { ambiguous: false };
    const answer = await this.txn(
      {
        compare: [{ key: etcdKey, target: "MOD", result: "EQUAL", mod_revision: String(expectedRevision + this.base) }],
        success: [{ request_put: { key: etcdKey, value: toBase64(value), prev_kv: true } }],
        failure: [{ request_range: { key: etcdKey } }],
      },
      attempt,
    );
    if (answer.succeeded) {
      const previous = answer.responses?.[0]?.response_put?.prev_kv;
      const revision = this.seen(revisionOf(answer.header) - this.base);
      const createRevision = previous ? Number(previous.create_revision) - this.base : revision;
      return this.wrote({ key, value, revision, createRevision });
    }
    const current = this.currentOf(key, answer);
    if (!current) throw new StorageError("NotFound", `key ${key} not found`);
    if (attempt.ambiguous && current.value === value && current.revision > expectedRevision) return current;
    throw new StorageError("Conflict", `key ${key} is at revision ${current.revision}, not ${expectedRevision}`, {
      current,
    });
  }

  async delete(key: string, expectedRevision?: number): Promise<StoredRecord> {
    this.ensureOpen();
    const etcdKey = toBase64(this.keys.key(key));
    const compare =
      expectedRevision === undefined
        ? { key: etcdKey, target: "CREATE", result: "GREATER", create_revision: "0" }
        : { key: etcdKey, target: "MOD", result: "EQUAL", mod_revision: String(expectedRevision + this.base) };
    const answer = await this.txn({
      compare: [compare],
      success: [{ request_delete_range: { key: etcdKey, prev_kv: true } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (answer.succeeded) {
      const previous = answer.responses?.[0]?.response_delete_range?.prev_kvs?.[0];
      const revision = this.seen(revisionOf(answer.header) - this.base);
      if (!previous) throw new StorageError("NotFound", `key ${key} not found`);
      return { ...this.recordOf(key, previous), revision };
    }
    const current = this.currentOf(key, answer);
    if (!current) throw new StorageError("NotFound", `key ${key} not found`);
    throw new StorageError("Conflict", `key ${key} is at revision ${current.revision}, not ${expectedRevision}`, {
      current,
    });
  }

  /** On a closed store the watch ends with "closed" (asynchronously) instead of throwing. */
  watch(options: WatchOptions): Watcher {
    if (this.closed) return this.hub.watch(options);
    const after = options.afterRevision;
    if (after <= 0) {
      // "From now": after everything this replica has written or reported, even if the feed has not brought it yet.
      return this.hub.watch({ ...options, afterRevision: Math.max(this.lastSeen, this.position - this.base) });
    }
    if (after < this.window.floor && after >= this.compacted) {
      const watch = new DirectWatch({
        client: this.client,
        keys: this.keys,
        base: this.base,
        options,
        onDone: () => this.direct.delete(watch),
      });
      this.direct.add(watch);
      return watch;
    }
    return this.hub.watch(options);
  }

  async compact(keepRevisions: number): Promise<number> {
    this.ensureOpen();
    const target = (await this.currentRevision()) - Math.max(0, keepRevisions);
    if (target <= this.compacted) return this.compacted;
    try {
      await this.call("/v3/kv/compaction", { revision: String(target + this.base) });
      this.compacted = Math.max(this.compacted, target);
    } catch (error) {
      if (!(error instanceof EtcdResponseError && /compacted/.test(error.message))) throw error;
      // Another replica (or another etcd user) compacted further already.
      this.compacted = Math.max(this.compacted, (await etcdCompactedRevision(this.client, this.keys)) - this.base);
    }
    return this.compacted;
  }

  /** Resolves while a linearizable read succeeds (etcd has quorum and answers in time): backs /readyz. */
  async checkHealth(timeoutMs = 2_000): Promise<void> {
    this.ensureOpen();
    await this.client.call("/v3/kv/range", { key: toBase64(this.keys.base), count_only: true }, { timeoutMs });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.feed.close();
    this.hub.close();
    for (const watch of [...this.direct]) watch.close();
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(closedError());
    }
    this.waiters = [];
    this.written.clear();
    this.fedRecords.clear();
    this.revisions.close(closedError());
    // Calls already made (writes accepted before close) finish and their callers hear how.
    await this.client.close();
  }

  private startFeed(from: number): EtcdWatchStream {
    return new EtcdWatchStream({
      client: this.client,
      key: ALL_KEYS,
      rangeEnd: ALL_KEYS,
      startRevision: from,
      onEvents: (events) => this.fed(events),
      onCompacted: (compactRevision) => this.feedCompacted(compactRevision),
    });
  }

  /** The feed's events, in revision order: ours to the window and the watchers, every one moves the position. */
  private fed(events: EtcdWatchEvent[]): void {
    const mine: WatchEvent[] = [];
    for (const event of events) {
      const key = this.keys.storeKey(fromBase64(event.kv.key));
      if (key === undefined) continue;
      const revision = Number(event.kv.mod_revision);
      const own = this.written.get(revision);
      const change = watchEventOf(key, event, this.base, own?.key === key && event.type !== "DELETE" ? own : undefined);
      if (!own && change.type !== "delete") this.keepFed(revision, change.record);
      mine.push(change);
    }
    this.position = Math.max(this.position, Number(events[events.length - 1].kv.mod_revision));
    if (this.written.size > 0) {
      for (const revision of this.written.keys()) if (revision <= this.position) this.written.delete(revision);
    }
    if (mine.length > 0) {
      this.window.append(mine);
      this.hub.publish(mine);
    }
    this.wakeWaiters();
  }

  /**
   * The feed was away so long that etcd compacted past its place: start again from now. Watchers re-list (as after a
   * slow cut-off); the window starts empty.
   */
  private feedCompacted(compactRevision: number): void {
    if (this.closed) return;
    this.compacted = Math.max(this.compacted, compactRevision - this.base);
    this.currentEtcdRevision().then(
      (now) => {
        if (this.closed) return;
        this.window.reset(now - this.base);
        this.written.clear();
        this.fedRecords.clear();
        this.position = now;
        this.hub.endAll({ kind: "slow" });
        this.feed = this.startFeed(now + 1);
        this.wakeWaiters();
      },
      () => setTimeout(() => this.feedCompacted(compactRevision), 500).unref(),
    );
  }

  private async currentEtcdRevision(): Promise<number> {
    const answer = await this.client.call<RangeResponse>("/v3/kv/range", {
      key: toBase64(this.keys.base),
      count_only: true,
    });
    return revisionOf(answer.header);
  }

  /** Waits until the feed has passed etcd revision `etcdRevision`, then the newest store change at or below it. */
  private async reportedRevision(etcdRevision: number): Promise<number> {
    if (this.position < etcdRevision) await this.feedReached(etcdRevision);
    return this.seen(this.window.lastChangeAtOrBelow(etcdRevision - this.base));
  }

  private listRevision(requested: number): Promise<number> {
    return requested > 0 ? Promise.resolve(requested) : this.currentRevision();
  }

  private feedReached(etcdRevision: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new StorageError("Unavailable", `etcd's watch did not reach revision ${etcdRevision} in time`));
      }, this.timeoutMs);
      const waiter: Waiter = { revision: etcdRevision, resolve, reject, timer };
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.revision <= this.position) {
        clearTimeout(waiter.timer);
        waiter.resolve();
      } else waiting.push(waiter);
    }
    this.waiters = waiting;
  }

  /** The record a write answers with: the feed's, if it brought the write first, else kept for the feed's event. */
  private wrote(record: StoredRecord): StoredRecord {
    const etcdRevision = record.revision + this.base;
    if (etcdRevision <= this.position) {
      const fed = this.fedRecords.get(etcdRevision);
      const same =
        fed?.key === record.key && fed.value === record.value && fed.createRevision === record.createRevision;
      return same ? fed : record;
    }
    if (this.written.size < WRITTEN_LIMIT) this.written.set(etcdRevision, record);
    return record;
  }

  private keepFed(etcdRevision: number, record: StoredRecord): void {
    this.fedRecords.set(etcdRevision, record);
    // Answers trail their events by at most the writes under way: a few hundred records is plenty.
    if (this.fedRecords.size > FED_KEPT) this.fedRecords.delete(this.fedRecords.keys().next().value as number);
  }

  private seen(revision: number): number {
    if (revision > this.lastSeen) this.lastSeen = revision;
    return revision;
  }

  private async txn(body: unknown, attempt: { ambiguous: boolean } = { ambiguous: false }): Promise<TxnResponse> {
    return this.call<TxnResponse>("/v3/kv/txn", body, attempt);
  }

  /** A call, its etcd errors as StorageErrors (NoSpace for etcd's space alarm, Compacted, Closed). */
  private async call<T>(path: string, body: unknown, attempt?: { ambiguous: boolean }): Promise<T> {
    try {
      const send = () => this.client.call<T>(path, body, { attempt });
      const request = body as { revision?: string };
      // Transactions and ranges at the current revision answer with etcd's revision at the time (see currentRevision).
      if (path === "/v3/kv/txn") return await this.revisions.track(true, send);
      if (path === "/v3/kv/range" && request.revision === undefined) return await this.revisions.track(false, send);
      return await send();
    } catch (error) {
      if (error instanceof EtcdResponseError) {
        if (/database space exceeded|NOSPACE/i.test(error.message)) {
          throw new StorageError("NoSpace", `etcd is out of space (${error.message}): compact and defragment it`);
        }
        if (/required revision has been compacted/.test(error.message)) {
          this.compacted = Math.max(this.compacted, (await etcdCompactedRevision(this.client, this.keys)) - this.base);
          const requested = Number((body as { revision?: string }).revision ?? 0) - this.base;
          throw this.compactedError(requested);
        }
      }
      throw error;
    }
  }

  private compactedError(requested: number): StorageError {
    return new StorageError("Compacted", `revision ${requested} is compacted (oldest readable: ${this.compacted})`, {
      compactedRevision: this.compacted,
    });
  }

  private currentOf(key: string, answer: TxnResponse): StoredRecord | undefined {
    const kv = answer.responses?.[0]?.response_range?.kvs?.[0];
    return kv ? this.recordOf(key, kv) : undefined;
  }

  private recordOf(key: string | undefined, kv: EtcdKeyValue): StoredRecord {
    return recordOf(key ?? this.keys.storeKey(fromBase64(kv.key)) ?? "", kv, this.base);
  }

  private ensureOpen(): void {
    if (this.closed) throw closedError();
  }
}

function recordOf(key: string, kv: EtcdKeyValue, base: number): StoredRecord {
  return {
    key,
    value: fromBase64(kv.value),
    revision: Number(kv.mod_revision) - base,
    createRevision: Number(kv.create_revision) - base,
  };
}

/** An etcd watch event as the store's WatchEvent (delete: the last value at the delete's revision). */
function watchEventOf(key: string, event: EtcdWatchEvent, base: number, written?: StoredRecord): WatchEvent {
  const revision = Number(event.kv.mod_revision) - base;
  const previous = event.prev_kv ? recordOf(key, event.prev_kv, base) : undefined;
  if (event.type === "DELETE") {
    const last = previous ?? { key, value: "", revision, createRevision: revision };
    return previous ? { type: "delete", record: { ...last, revision }, previous } : { type: "delete", record: last };
  }
  const record = written ?? recordOf(key, event.kv, base);
  if (event.kv.version === "1" || !previous) return { type: "create", record };
  return { type: "update", record, previous };
}

function revisionOf(header: EtcdHeader | undefined): number {
  return Number(header?.revision ?? 0);
}

function isFutureRevision(error: unknown): boolean {
  return error instanceof EtcdResponseError && /future revision/.test(error.message);
}

function closedError(): StorageError {
  return new StorageError("Closed", "storage is closed");
}

/**
 * A watch older than the event window: an etcd watch of its own, delivered in order in later macrotasks; a paused
 * consumer pauses the stream (etcd buffers, writers never wait).
 */
class DirectWatch implements Watcher {
  private readonly options: WatchOptions;
  private readonly stream: EtcdWatchStream;
  private readonly onDone: () => void;
  private queue: WatchEvent[][] = [];
  private paused = false;
  private scheduled = false;
  private done = false;

  constructor(parts: {
    client: EtcdClient;
    keys: EtcdKeyspace;
    base: number;
    options: WatchOptions;
    onDone: () => void;
  }) {
    const { keys, base, options } = parts;
    this.options = options;
    this.onDone = parts.onDone;
    const range = keys.range(options.prefix);
    this.stream = new EtcdWatchStream({
      client: parts.client,
      key: range.key,
      rangeEnd: range.end,
      startRevision: options.afterRevision + 1 + base,
      onEvents: (events) => {
        this.queue.push(
          events.map((event) => watchEventOf(keys.storeKey(fromBase64(event.kv.key)) ?? "", event, base)),
        );
        this.schedule();
      },
      onCompacted: (compactRevision) =>
        this.finish({
          kind: "compacted",
          compactedRevision: compactRevision - base,
          requestedRevision: options.afterRevision,
        }),
    });
  }

  resume(): void {
    if (!this.paused || this.done) return;
    this.paused = false;
    this.stream.resume();
    this.schedule();
  }

  close(): void {
    this.finish({ kind: "closed" });
  }

  private schedule(): void {
    if (this.scheduled || this.paused || this.done) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (!this.paused && !this.done && this.queue.length > 0) {
        const batch = this.queue.shift()!;
        let more: boolean | undefined;
        try {
          more = this.options.onEvents(batch);
        } catch (error) {
          process.emitWarning(`watch onEvents threw, closing the watch: ${String(error)}`);
          this.finish({ kind: "closed" });
          return;
        }
        if (more === false) {
          this.paused = true;
          this.stream.pause();
        }
      }
    });
  }

  private finish(reason: Parameters<WatchOptions["onClose"]>[0]): void {
    if (this.done) return;
    this.done = true;
    this.stream.close();
    this.queue = [];
    this.onDone();
    setImmediate(() => this.options.onClose(reason));
  }
}
