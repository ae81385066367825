// The one mapping of storage failures to the API's Status errors. The generic store (src/registry/store.ts) asks it
// with the object a request was about; the HTTP error mapping (src/http/error-status.ts) asks it for failures that
// reach it unmapped (writes outside the registry: logins, key use, passwords), with no object to name.

import { StorageError, type StorageErrorCode } from "../storage/types.ts";
import { errors, type StatusError } from "./errors.ts";
import type { GroupResource } from "./types.ts";

/** The object a request was about: its conflicts, absences and duplicates are that object's. */
export interface StorageTarget {
  resource: GroupResource;
  name: string;
  /** A list read at this revision: compaction expired the continue token, or the revision asked for. */
  list?: { revision: number; continued: boolean };
}

const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";

/**
 * Each storage code's Status; undefined: a server fault (a 500 to the client, the cause in the server log). The codes
 * that name an object (Conflict, NotFound, KeyExists, Compacted: a list's continue token) are faults without one.
 */
const STATUS_OF: Record<StorageErrorCode, (error: StorageError, target?: StorageTarget) => StatusError | undefined> = {
  Conflict: (_error, target) => target && errors.modified(target.resource, target.name),
  NotFound: (_error, target) => target && errors.notFound(target.resource, target.name),
  KeyExists: (_error, target) => target && errors.alreadyExists(target.resource, target.name),
  Compacted: (error, target) =>
    target &&
    errors.expired(
      target.list && !target.list.continued
        ? `too old resource version: ${target.list.revision} (${error.compactedRevision ?? 0})`
        : CONTINUE_EXPIRED,
    ),
  NoSpace: () => errors.insufficientStorage(),
  // The store closed under a request (shutdown past its grace period): the client retries elsewhere, as for 503.
  Closed: () => errors.shuttingDown(),
  Corrupt: () => undefined, // the file and key go to the server log, never to the client
  Unavailable: (error) => errors.serviceUnavailable(`storage is unavailable: ${error.message}`),
};

/** The Status error a storage failure answers; any other value (and a server fault) is returned as it is. */
export function storageStatus(error: unknown, target?: StorageTarget): unknown {
  if (!(error instanceof StorageError)) return error;
  return STATUS_OF[error.storageCode](error, target) ?? error;
}
