import { PatchApplyError } from "../patches/errors.ts";
import { describeError, statusCode, statusReason } from "./kube-client.ts";

/** The host name is taken by an object this virtual cluster does not manage: it is never touched. */
export class UnmanagedObjectError extends Error {
  constructor(kind: string, namespace: string, name: string, label: string) {
    super(
      `host ${kind} "${namespace}/${name}" already exists and is not managed by this virtual cluster ` +
        `(it lacks the label ${label}); it is left alone, so this object is not synced until it is removed or renamed`,
    );
    this.name = "UnmanagedObjectError";
  }
}

/** A transient condition (stale cache, conflict): retried with backoff, no event. */
export class RetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RetryError";
  }
}

/** Wraps a host API error with the object it was about. */
export class HostWriteError extends Error {
  constructor(verb: string, kind: string, namespace: string, name: string, cause: unknown, secret: boolean) {
    // Server messages about a Secret may quote its content: only the status goes into the message then.
    const detail = secret
      ? `HTTP ${statusCode(cause) ?? "error"} ${statusReason(cause) ?? ""}`.trim()
      : describeError(cause);
    super(`cannot ${verb} host ${kind} "${namespace}/${name}": ${detail}`, { cause });
    this.name = "HostWriteError";
  }
}

/** True when the failure is something a user should see as a SyncError event on the virtual object. */
export function deservesEvent(error: unknown): boolean {
  if (
    error instanceof PatchApplyError ||
    error instanceof UnmanagedObjectError ||
    error instanceof NameCollisionError ||
    error instanceof NotConvergingError ||
    error instanceof ImportError ||
    error instanceof VirtualWriteError
  )
    return true;
  if (!(error instanceof HostWriteError)) return false;
  const code = statusCode(error.cause);
  // Rejections of the object itself; conflicts, throttling, network and server errors are transient.
  return code !== undefined && code >= 400 && code < 500 && code !== 404 && code !== 409 && code !== 429;
}

/**
 * The message of a failed sync. A patch failure on a Secret keeps the patch and path but not the expression's
 * error text, which may quote the Secret's data.
 */
export function syncErrorMessage(confidential: boolean, error: unknown): string {
  if (error instanceof PatchApplyError) {
    const where = `${error.field} (at ${error.path === "" ? "the whole object" : error.path})`;
    if (confidential && !error.limit) return `patch ${where} failed (details are withheld for Secrets)`;
    return `patch ${where} failed: ${error.reason}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Two virtual objects translate to the same host name: the second is not synced. */
export class NameCollisionError extends Error {
  constructor(kind: string, namespace: string, name: string, other: { namespace: string; name: string }) {
    super(
      `host ${kind} "${namespace}/${name}" is already the copy of virtual ${kind} "${other.namespace}/${other.name}", ` +
        "whose name translates to the same host name; this object is not synced until one of them is renamed or deleted",
    );
    this.name = "NameCollisionError";
  }
}

/** A sync that rewrites its own result again and again (a patch that reads what the write changes). */
export class NotConvergingError extends Error {
  constructor(kind: string, namespace: string, name: string, writes: number) {
    super(
      `host ${kind} "${namespace}/${name}" was rewritten ${writes} times in a row by its own sync without any other ` +
        "change (a patch that reads a field the write changes, such as metadata.resourceVersion, never converges); " +
        "the syncer stopped writing it until the virtual object changes",
    );
    this.name = "NotConvergingError";
  }
}

/** A reference patch names an object that exists on neither side, or the import into the virtual cluster failed. */
export class ImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportError";
  }
}

/** The virtual cluster refused a change that shows what the host decided (a Service's cluster IP or node ports). */
export class VirtualWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VirtualWriteError";
  }
}
