// Leader election on an etcd lease, so that of several platform replicas exactly one runs the background
// controllers. The leader's record (<prefix>/leader/<name>) is attached to a lease of `ttlSeconds`, created only
// when no record exists (a transaction on its create revision) and kept alive every third of the TTL. A leader that
// cannot renew stops leading on its own when the TTL could have run out, before anyone else can win; when it dies
// etcd expires the lease, deletes the record, and the next candidate to look (every `pollMs`) takes over. So
// leadership moves within ttlSeconds + pollMs of a leader's death, and two replicas never lead at once as long as
// their clocks run at the same rate.

import type { EtcdClient, EtcdHeader, EtcdKeyValue } from "./etcd-client.ts";
import { fromBase64, toBase64 } from "./etcd-client.ts";

export interface EtcdElectionOptions {
  client: EtcdClient;
  /** The etcd key of the leader record. */
  key: string;
  /** Who this candidate is (written in the record; shown in logs). */
  identity: string;
  /** Lease TTL in seconds (default 5). */
  ttlSeconds?: number;
  /** How often a follower looks for a free record (default 500 ms). */
  pollMs?: number;
  /** Called with true when this candidate starts leading, false when it stops. */
  onChange(leading: boolean): void;
  /** A failed etcd call (the election keeps trying). */
  onError?(error: unknown): void;
}

interface TxnAnswer {
  header?: EtcdHeader;
  succeeded?: boolean;
  responses?: { response_range?: { kvs?: EtcdKeyValue[] } }[];
}

export class EtcdElection {
  private readonly options: EtcdElectionOptions;
  private readonly ttlMs: number;
  private leaseId?: string;
  private isLeading = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  /** When the lease may have expired at the latest, as this process measures it. */
  private leaseDeadline = 0;
  private running: Promise<void> = Promise.resolve();

  constructor(options: EtcdElectionOptions) {
    this.options = options;
    this.ttlMs = (options.ttlSeconds ?? 5) * 1000;
  }

  get leading(): boolean {
    return this.isLeading;
  }

  /** The identity in the leader record now (undefined when there is none). */
  async leader(): Promise<string | undefined> {
    const answer = await this.options.client.call<{ kvs?: EtcdKeyValue[] }>("/v3/kv/range", {
      key: toBase64(this.options.key),
    });
    const kv = answer.kvs?.[0];
    return kv ? fromBase64(kv.value) : undefined;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops campaigning; a leader gives the record up at once (revoking its lease) so another takes over. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    const lease = this.leaseId;
    this.step(false);
    if (lease) {
      await this.options.client.call("/v3/lease/revoke", { ID: lease }, { timeoutMs: 2_000 }).catch(() => {});
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().catch((error) => this.options.onError?.(error));
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.isLeading) await this.renew();
      else await this.campaign();
    } catch (error) {
      this.options.onError?.(error);
      // Unable to reach etcd: a leader stops before its lease can have run out.
      if (this.isLeading && Date.now() >= this.leaseDeadline) this.lose();
    }
    const renewEvery = Math.max(100, Math.floor(this.ttlMs / 3));
    this.schedule(this.isLeading ? renewEvery : (this.options.pollMs ?? 500));
  }

  private async campaign(): Promise<void> {
    const { client, key, identity } = this.options;
    if (!this.leaseId) {
      const started = Date.now();
      const grant = await client.call<{ ID?: string; TTL?: string }>("/v3/lease/grant", {
        TTL: String(this.ttlMs / 1000),
      });
      if (!grant.ID) throw new Error("etcd granted no lease");
      this.leaseId = grant.ID;
      this.leaseDeadline = started + this.ttlMs;
    }
    const record = toBase64(key);
    const answer = await client.call<TxnAnswer>("/v3/kv/txn", {
      compare: [{ key: record, target: "CREATE", result: "EQUAL", create_revision: "0" }],
      success: [{ request_put: { key: record, value: toBase64(identity), lease: this.leaseId } }],
      failure: [{ request_range: { key: record } }],
    });
    const holder = answer.responses?.[0]?.response_range?.kvs?.[0];
    if (answer.succeeded || (holder && holder.lease === this.leaseId)) {
      // Renew at once so the deadline counts from a keep-alive that etcd acknowledged after the record was written.
      await this.renew();
      this.step(true);
    } else {
      // Someone else leads: keep our lease alive only while we campaign with it.
      await this.renew().catch(() => {
        this.leaseId = undefined;
      });
    }
  }

  private async renew(): Promise<void> {
    if (!this.leaseId) throw new Error("no lease to renew");
    const sent = Date.now();
    const answer = await this.options.client.call<{ result?: { TTL?: string } }>(
      "/v3/lease/keepalive",
      { ID: this.leaseId },
      { timeoutMs: Math.max(500, Math.floor(this.ttlMs / 3)) },
    );
    const ttl = Number(answer.result?.TTL ?? 0);
    if (ttl <= 0) {
      // The lease expired (etcd deleted our record): campaign again with a new one.
      this.leaseId = undefined;
      if (this.isLeading) this.lose();
      return;
    }
    this.leaseDeadline = sent + ttl * 1000;
  }

  private lose(): void {
    this.leaseId = undefined;
    this.step(false);
  }

  private step(leading: boolean): void {
    if (this.isLeading === leading) return;
    this.isLeading = leading;
    this.options.onChange(leading);
  }
}
