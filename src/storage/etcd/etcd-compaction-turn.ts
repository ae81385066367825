// One compaction per interval across every replica on an etcd prefix, coordinated as kube-apiserver's compactor
// does it: a record (<prefix>/meta/compaction) whose etcd version is a logical clock. A replica takes its turn with
// a compare-and-swap "the record's version is still the one I saw last": the put bumps the version, so every other
// replica that tries in the same interval fails its compare, learns the new version and waits for the next
// interval. Only the elected leader runs compaction (leader.ts); the turn keeps two replicas that both believe they
// lead (for the moments a lease takes to expire) from compacting twice, and a new leader from compacting at once.

import { type EtcdClient, toBase64 } from "./etcd-client.ts";
import type { EtcdKeyspace } from "./etcd-keyspace.ts";

interface TxnAnswer {
  succeeded?: boolean;
  responses?: { response_range?: { kvs?: { version?: string }[] } }[];
}

/** The record's etcd key. */
export function compactionRecordKey(keys: EtcdKeyspace): string {
  return `${keys.prefix}/meta/compaction`;
}

export class EtcdCompactionTurn {
  private readonly client: EtcdClient;
  private readonly key: string;
  /** The record's version as this replica last saw it (0: not yet; etcd's version of an absent key). */
  private version = 0;

  constructor(options: { client: EtcdClient; keys: EtcdKeyspace }) {
    this.client = options.client;
    this.key = toBase64(compactionRecordKey(options.keys));
  }

  /**
   * True when this replica may compact now (the record then holds `target`); false when another replica took a
   * turn since this one last looked (this one now knows, and may take the next).
   */
  async take(target: number): Promise<boolean> {
    const answer = await this.client.call<TxnAnswer>("/v3/kv/txn", {
      compare: [{ key: this.key, target: "VERSION", result: "EQUAL", version: String(this.version) }],
      success: [{ request_put: { key: this.key, value: toBase64(String(target)) } }],
      failure: [{ request_range: { key: this.key } }],
    });
    if (answer.succeeded) {
      this.version++;
      return true;
    }
    this.version = Number(answer.responses?.[0]?.response_range?.kvs?.[0]?.version ?? 0);
    return false;
  }
}
