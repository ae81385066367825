// Sizes and defragmentation of the etcd members behind a store. etcd's compaction frees pages inside each member's
// database file (bbolt), but only a defragmentation, member by member, gives them back to the file system; while a
// member defragments it answers nothing, so this does one member at a time (the others keep the quorum), followers
// first and the leader last, and only members whose free share passed a threshold. After a round, an etcd NOSPACE
// alarm (raised when a member passed etcd's own --quota-backend-bytes) is disarmed, as an operator would: etcd
// raises it again at once if the member is still over.
//
// Each member is asked on its own client URL (the endpoints given to the platform), with its own one-endpoint
// client: the store's client fails over between members, which is right for data and wrong for "this member".

import type { EtcdMemberSize, ReclaimRun, StoreStats } from "../store-stats.ts";
import { EtcdClient, type EtcdTls } from "./etcd-client.ts";

export interface EtcdMaintenanceOptions {
  endpoints: string[];
  tls?: EtcdTls;
  /** How long a status call may take (default 5 s). */
  requestTimeoutMs?: number;
  /** How long one member's defragmentation may take (default 5 min; etcd copies the whole file). */
  defragTimeoutMs?: number;
}

export interface DefragPolicy {
  /** Defragment a member once free pages are at least this share of its file (0 < share < 1; default 0.25)... */
  freeShare: number;
  /** ... and at least this many bytes (default 16 MiB), so small files are left alone. */
  minFreeBytes: number;
}

export const DEFAULT_DEFRAG_POLICY: DefragPolicy = { freeShare: 0.25, minFreeBytes: 16 * 1024 * 1024 };

interface StatusAnswer {
  header?: { member_id?: string; revision?: string };
  leader?: string;
  dbSize?: string;
  dbSizeInUse?: string;
}

interface AlarmAnswer {
  alarms?: { memberID?: string; alarm?: string }[];
}

export class EtcdMaintenance {
  /** Defragmentations this process ran, newest last (at most 20 kept). */
  readonly runs: ReclaimRun[] = [];
  private readonly members: { endpoint: string; client: EtcdClient }[];
  private readonly defragTimeoutMs: number;

  constructor(options: EtcdMaintenanceOptions) {
    this.members = options.endpoints.map((endpoint) => ({
      endpoint,
      client: new EtcdClient({
        endpoints: [endpoint],
        tls: options.tls,
        requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
        maxSockets: 2,
      }),
    }));
    this.defragTimeoutMs = options.defragTimeoutMs ?? 5 * 60_000;
  }

  /** Each member's status; a member that does not answer is listed with its error (one per etcd member id). */
  async memberSizes(): Promise<EtcdMemberSize[]> {
    const sizes = await Promise.all(
      this.members.map(async ({ endpoint, client }): Promise<EtcdMemberSize> => {
        try {
          const status = await client.call<StatusAnswer>("/v3/maintenance/status", {});
          const id = status.header?.member_id;
          return {
            endpoint,
            id: id === undefined ? undefined : BigInt(id).toString(16),
            leader: id !== undefined && status.leader === id,
            sizeBytes: Number(status.dbSize ?? 0),
            inUseBytes: Number(status.dbSizeInUse ?? status.dbSize ?? 0),
          };
        } catch (error) {
          return { endpoint, leader: false, sizeBytes: 0, inUseBytes: 0, error: (error as Error).message };
        }
      }),
    );
    // Two endpoints of one member (say, a name and an address) count once.
    const seen = new Set<string>();
    return sizes.filter((size) => size.id === undefined || (!seen.has(size.id) && seen.add(size.id)));
  }

  /** Sizes as StoreStats: the largest member's file (every member holds the same data; quota and alarms are per member). */
  async stats(revisions: { revision: number; compactedRevision: number }): Promise<StoreStats> {
    const members = await this.memberSizes();
    const answering = members.filter((member) => member.error === undefined);
    if (answering.length === 0) throw new Error(`no etcd member answered: ${members[0]?.error ?? "no endpoints"}`);
    const largest = answering.reduce((a, b) => (b.sizeBytes > a.sizeBytes ? b : a));
    return {
      backend: "etcd",
      sizeBytes: largest.sizeBytes,
      inUseBytes: largest.inUseBytes,
      freeBytes: Math.max(0, largest.sizeBytes - largest.inUseBytes),
      ...revisions,
      lastReclaim: this.runs.at(-1),
      members,
    };
  }

  /**
   * Defragments, one after another, every member whose free pages pass the policy: followers first, the leader
   * last; each member answers its status again before the next one starts. Resolves to the runs made (none when no
   * member needed one). A member that fails is reported and the round stops, so a sick cluster is not pushed.
   */
  async defragment(policy: DefragPolicy = DEFAULT_DEFRAG_POLICY): Promise<ReclaimRun[]> {
    const sizes = await this.memberSizes();
    const due = sizes
      .filter((size) => {
        const free = size.sizeBytes - size.inUseBytes;
        return size.error === undefined && free >= policy.minFreeBytes && free >= size.sizeBytes * policy.freeShare;
      })
      .sort((a, b) => Number(a.leader) - Number(b.leader));
    const runs: ReclaimRun[] = [];
    for (const size of due) {
      const member = this.members.find((m) => m.endpoint === size.endpoint)!;
      const at = new Date();
      const started = performance.now();
      await member.client.call("/v3/maintenance/defragment", {}, { timeoutMs: this.defragTimeoutMs });
      const after = (await this.memberSizes()).find((s) => s.endpoint === size.endpoint);
      if (!after || after.error !== undefined) {
        throw new Error(`etcd member ${size.endpoint} does not answer after its defragmentation: ${after?.error}`);
      }
      const run = {
        at,
        durationMs: performance.now() - started,
        freedBytes: Math.max(0, size.sizeBytes - after.sizeBytes),
        member: size.endpoint,
      };
      runs.push(run);
      this.runs.push(run);
      if (this.runs.length > 20) this.runs.shift();
    }
    if (runs.length > 0) await this.disarmNoSpace();
    return runs;
  }

  /** Disarms etcd's NOSPACE alarms; resolves to how many there were. */
  async disarmNoSpace(): Promise<number> {
    const listed = await this.anyMember<AlarmAnswer>("/v3/maintenance/alarm", { action: "GET" });
    const alarms = (listed.alarms ?? []).filter((alarm) => alarm.alarm === "NOSPACE");
    for (const alarm of alarms) {
      await this.anyMember("/v3/maintenance/alarm", {
        action: "DEACTIVATE",
        memberID: alarm.memberID,
        alarm: "NOSPACE",
      });
    }
    return alarms.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.client.close()));
  }

  private async anyMember<T>(path: string, body: unknown): Promise<T> {
    let last: unknown;
    for (const member of this.members) {
      try {
        return await member.client.call<T>(path, body);
      } catch (error) {
        last = error;
      }
    }
    throw last;
  }
}
