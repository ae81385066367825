import type { SyncSnapshot } from "./carry-back.ts";
import type { WireObject } from "./types.ts";

/** How far a host informer has read: re-lists counted (`epoch`), and the newest resourceVersion it delivered. */
export interface InformerProgress {
  epoch: number;
  resourceVersion: string;
}

/** What the syncer remembers about one key between syncs. */
export interface KeyState {
  /** Both sides when last in sync (the host's without the marks): which side changed since. */
  last?: { virtual: SyncSnapshot; host: SyncSnapshot };
  /**
   * Our last write to the host: a create or update (the object the server returned, and the informer epoch it was
   * made in) or a delete (the uid deleted). Only a guard against a cache that has not yet delivered the write: see
   * currentHost(), which decides from the informer's progress every time and never trusts it beyond that, and
   * Reconciler.hostListed(), which syncs every key that has one again after a re-list.
   */
  written?: { object: WireObject; epoch: number } | { deletedUid: string };
  /**
   * The desired state last written (a digest of its stable JSON) and the resourceVersion the host returned for it.
   * While the host object still has that resourceVersion and the desired state is unchanged, nothing is written, even
   * if the host normalizes the object in a way the semantic comparison does not know (a loop guard).
   */
  applied?: {
    desired: string;
    resourceVersion: string;
    /** What the desired state was computed from besides the host object (virtual resourceVersion and owner). */
    inputs: string;
    /** Consecutive updates before this one caused only by our own previous write (same inputs): a loop counter. */
    rewrites: number;
  };
  /** The inputs and host resourceVersion a sync completed with; the same again needs no sync. */
  settled?: string;
  /** A change the virtual side refused for this object (not tried again while it stays the same). */
  refusedBack?: string;
  /** Stopped as not converging at these inputs (virtual resourceVersion and owner): nothing is written until they change. */
  stalled?: string;
}

const revision = (value: string | undefined): bigint | undefined => {
  if (value === undefined || !/^\d{1,30}$/.test(value)) return undefined;
  return BigInt(value);
};

/**
 * The host object as the syncer should see it, decided afresh on every call from what the informer has delivered:
 *  - our create or update, while the informer (same list epoch) has delivered nothing at or past its
 *    resourceVersion: it has not seen the write yet, and nothing newer either, so the write is the newest known state;
 *  - our delete, while the cache still holds the uid we deleted;
 *  - otherwise the cache, and the overlay is dropped for good.
 * Resource versions are compared as the etcd revisions they are; one that is not a number disables the overlay (the
 * cache then decides, as in controller-runtime, and a stale write fails its precondition and is retried).
 */
export function currentHost(
  cached: WireObject | undefined,
  state: KeyState | undefined,
  progress: InformerProgress | undefined,
): WireObject | undefined {
  const written = state?.written;
  if (!written || !progress) return cached;
  if (writeAhead(written, cached, progress)) return "deletedUid" in written ? undefined : written.object;
  delete state.written;
  return cached;
}

/**
 * Drops our last write once the informer has delivered it, as currentHost() would at the key's next sync. Called when
 * the write answers and at each host event of the key: the echo of a write needs no sync, so without this the
 * answer of every key's last write stayed in memory for the key's life (8 MB with 4,000 Endpoints and their Services).
 */
export function forgetDeliveredWrite(
  state: KeyState,
  cached: WireObject | undefined,
  progress: InformerProgress | undefined,
): void {
  if (state.written && progress && !writeAhead(state.written, cached, progress)) delete state.written;
}

/** Whether our last write is still newer than what the informer has delivered (see currentHost()). */
function writeAhead(
  written: NonNullable<KeyState["written"]>,
  cached: WireObject | undefined,
  progress: InformerProgress,
): boolean {
  if ("deletedUid" in written) return cached !== undefined && cached.metadata?.uid === written.deletedUid;
  if (written.epoch !== progress.epoch) return false;
  const seen = revision(progress.resourceVersion);
  const ours = revision(written.object.metadata?.resourceVersion);
  return seen !== undefined && ours !== undefined && seen < ours;
}
