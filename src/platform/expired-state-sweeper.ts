// The short-lived state every replica keeps in the store, deleted once it expired, by the leader alone: the OpenID
// provider's artifacts (and the keys of its expired refresh tokens), single sign-on logins in progress and SAML
// assertion IDs, the shared failure counts of login and client-secret throttling. Every reader already treats an
// expired record as absent; the sweep only frees the space.

import type { Logger } from "pino";
import type { LeaderTask } from "./leader.ts";

export const DEFAULT_STATE_SWEEP_MS = 5 * 60 * 1000;

export interface SweepJob {
  /** What is swept, for the log. */
  name: string;
  /** Deletes what expired; resolves to how many records it deleted. */
  sweep(): Promise<number>;
}

export function expiredStateSweeper(options: { jobs: SweepJob[]; intervalMs?: number; logger?: Logger }): LeaderTask {
  const { jobs, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  const pass = async () => {
    for (const job of jobs) {
      try {
        const deleted = await job.sweep();
        if (deleted > 0) logger?.debug({ deleted, state: job.name }, "deleted expired state");
      } catch (error) {
        logger?.warn({ err: String(error), state: job.name }, "sweeping expired state failed");
      }
    }
  };
  return {
    name: "expired state sweeper",
    start() {
      const tick = () => {
        if (busy) return;
        busy = true;
        void pass().finally(() => {
          busy = false;
        });
      };
      tick();
      timer = setInterval(tick, options.intervalMs ?? DEFAULT_STATE_SWEEP_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
