import type { MetadataSnapshot } from "./reverse-metadata.ts";
import type { WireObject } from "./types.ts";

/** What the syncer remembers about one key between syncs. */
export interface KeyState {
  /** Labels and annotations of both sides when last in sync (the host's without the marks): which side changed since. */
  last?: { virtual: MetadataSnapshot; host: MetadataSnapshot };
  /**
   * Our last write to the host, until the host informer has seen it: a create or update (the object the server
   * returned) or a delete (the uid deleted). Read instead of the informer's possibly older copy.
   */
  written?: { object: WireObject } | { deletedUid: string };
  /**
   * The desired state last written (a digest of its stable JSON) and the resourceVersion the host returned for it.
   * While the host object still has that resourceVersion and the desired state is unchanged, nothing is written, even
   * if the host normalizes the object in a way the semantic comparison does not know (a loop guard).
   */
  applied?: { desired: string; resourceVersion: string };
  /** Consecutive updates caused only by our own previous write, for the virtual object at this version. */
  rewrites?: { virtualVersion: string; count: number };
  /** A host cluster IP the virtual cluster refused for this Service (not tried again). */
  refusedClusterIP?: string;
  /** Stopped as not converging at this virtual resourceVersion: nothing is written until it changes. */
  stalled?: string;
}

const revision = (value: string | undefined): bigint | undefined => {
  if (value === undefined || !/^\d{1,30}$/.test(value)) return undefined;
  return BigInt(value);
};

/** True when the informer's event shows the host at or past our write, so the overlay can go. */
export function caughtUp(
  written: NonNullable<KeyState["written"]>,
  event: "add" | "update" | "delete",
  seen: WireObject,
): boolean {
  const metadata = seen.metadata ?? {};
  if ("deletedUid" in written)
    return event === "delete" ? metadata.uid === written.deletedUid : metadata.uid !== written.deletedUid;
  const ours = written.object.metadata?.resourceVersion;
  if (metadata.resourceVersion === ours) return true;
  const [a, b] = [revision(metadata.resourceVersion), revision(ours)];
  return a !== undefined && b !== undefined && a > b;
}

/** The host object as the syncer should see it: our own last write while the informer has not caught up. */
export function currentHost(cached: WireObject | undefined, state: KeyState | undefined): WireObject | undefined {
  const written = state?.written;
  if (!written) return cached;
  return "deletedUid" in written ? undefined : written.object;
}
