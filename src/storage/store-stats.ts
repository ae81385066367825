// How much room a store takes, how much of it holds data, and what its housekeeping did last: the numbers behind
// the store's metrics, `virtualcluster platform store-info`, the store quota and the free-disk warning.

/** One run of returning free space to the file system: SQLite's incremental vacuum or an etcd defragmentation. */
export interface ReclaimRun {
  /** When the run started. */
  at: Date;
  /** Wall time from its first step to its last (SQLite: steps run between commits, so this is not a stall). */
  durationMs: number;
  /** Bytes given back (the file shrank by this much). */
  freedBytes: number;
  /** SQLite: the longest single step, i.e. the longest a commit could wait for it. etcd: the member defragmented. */
  longestStepMs?: number;
  member?: string;
}

/** One etcd member's database, from its status. */
export interface EtcdMemberSize {
  endpoint: string;
  /** etcd's member id (hex), or undefined when the member did not answer. */
  id?: string;
  leader: boolean;
  sizeBytes: number;
  inUseBytes: number;
  /** Why the member could not be asked (its sizes are then 0). */
  error?: string;
}

export interface StoreStats {
  backend: "sqlite" | "etcd";
  /** Bytes on disk: SQLite's database and WAL files; etcd's largest member database file. */
  sizeBytes: number;
  /** Bytes holding data: live objects and the history compaction has not dropped yet (SQLite: pages in use). */
  inUseBytes: number;
  /** Bytes of free pages inside the files: reusable by writes, returned by vacuum (SQLite) or defrag (etcd). */
  freeBytes: number;
  /** SQLite: the write-ahead log's size (part of sizeBytes). */
  walBytes?: number;
  /** SQLite: whether freed pages can be returned ("incremental") or only reused ("none", an unconverted file). */
  autoVacuum?: "incremental" | "none";
  /** The store's newest and oldest readable revisions. */
  revision: number;
  compactedRevision: number;
  /** The last run that returned space (SQLite vacuum or etcd defragmentation), if any since the process started. */
  lastReclaim?: ReclaimRun;
  /** etcd: each member named in the endpoints. */
  members?: EtcdMemberSize[];
}
