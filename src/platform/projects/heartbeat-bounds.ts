// How often virtual clusters report to the platform and how long the platform waits before it calls one offline.
// The platform states the heartbeat (selves tells runtimes, which follow it); the offline bound must span at least two
// heartbeats, or an instance whose report arrives a moment late is marked offline, then online at its next report,
// and flaps. No imports: the command line checks its flags with this before the server modules load.

/** What runtimes are told to use unless the platform is started with another (`--instance-heartbeat-seconds`). */
export const DEFAULT_HEARTBEAT_SECONDS = 30;
/** Heartbeats an instance may miss by default before it is marked offline. */
export const DEFAULT_MISSED_HEARTBEATS = 3;

export interface HeartbeatBounds {
  heartbeatSeconds: number;
  offlineAfterSeconds: number;
}

/** The bounds in force for the flags given (either may be unset); throws when they would make instances flap. */
export function heartbeatBounds(given: { heartbeatSeconds?: number; offlineAfterSeconds?: number }): HeartbeatBounds {
  const heartbeatSeconds = given.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS;
  const offlineAfterSeconds = given.offlineAfterSeconds ?? heartbeatSeconds * DEFAULT_MISSED_HEARTBEATS;
  if (heartbeatSeconds < 1) throw new Error(`the instance heartbeat must be 1 s or more, not ${heartbeatSeconds}`);
  if (offlineAfterSeconds < 2 * heartbeatSeconds) {
    const named = given.heartbeatSeconds === undefined ? "default" : "--instance-heartbeat-seconds";
    throw new Error(
      `--instance-offline-after-seconds ${offlineAfterSeconds} is below twice the instance heartbeat of ${heartbeatSeconds} s (${named}): ` +
        `instances would flap between online and offline; use ${2 * heartbeatSeconds} or more, or a shorter --instance-heartbeat-seconds`,
    );
  }
  return { heartbeatSeconds, offlineAfterSeconds };
}
