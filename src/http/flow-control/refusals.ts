// Every 429 that flow control answers, in one place: what was full and what the client should do. Each carries
// Retry-After, which kubectl and client-go wait out before they retry.

import { errors, type StatusError } from "../../apimachinery/errors.ts";

export const RETRY_AFTER_SECONDS = 1;

export type RejectionReason = "queue-full" | "time-out" | "connection-reserve";

export const refusals = {
  /** A request on a reserve connection that is neither a health probe nor from a privileged caller. */
  connectionReserve(): StatusError {
    return errors.tooManyRequests(
      "the server is at its connection limit; its reserved connections serve only health probes and admins, please try again later",
      RETRY_AFTER_SECONDS,
    );
  },
  /** The caller's own queue (or its priority level's) has no room: the caller is the one sending too much. */
  queueFull(level: string): StatusError {
    return errors.tooManyRequests(
      `too many requests from you are waiting (priority level "${level}"), please try again later`,
      RETRY_AFTER_SECONDS,
    );
  },
  /** Waited in its queue for the longest a request may wait. */
  timeOut(level: string): StatusError {
    return errors.tooManyRequests(
      `the server is busy: the request waited too long for its turn (priority level "${level}"), please try again later`,
      RETRY_AFTER_SECONDS,
    );
  },
};
