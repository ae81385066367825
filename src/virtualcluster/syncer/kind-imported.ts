import { IMPORTED_LABEL } from "./constants.ts";
import type { WireObject } from "./types.ts";

/** A virtual object the syncer imported from the host: owned by the host object, never synced toward it. */
export const isImported = (object: WireObject | undefined): boolean =>
  object?.metadata?.labels?.[IMPORTED_LABEL] !== undefined;
