// Ends an open watch once its caller is no longer who it was when the watch began: the credential revoked, expired or
// deleted, its user disabled, or its teams, roles or scope changed. A list is authorized and narrowed for the caller
// as they are at that moment; a watch runs for as long as its client asks (timeoutSeconds), so without this a
// revoked key, or a user taken out of a team, would go on receiving what they may no longer read. The client sees
// the stream end, lists again, and gets its 401 or its narrowed list. kube-apiserver leaves watches to run their
// course; the platform, whose "revoke at once" covers every credential, does not (SECURITY.md).

import type { UserInfo } from "../registry/types.ts";

/** What tells open watches that callers may have changed (the platform: its users, teams and keys). */
export interface CallerChanges {
  /** Calls `listener` after any change that may alter who a credential is or what it may do; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** Whether `after` is the same caller with the same rights as `before` (two resolutions of one credential). */
  same(before: UserInfo, after: UserInfo): boolean;
}

/** Something that may end a watch early: started once the stream runs, ended with it (serveWatch). */
export interface WatchGuard {
  start(stop: () => void): void;
  end(): void;
}

export interface WatchCallerCheckOptions {
  changes: CallerChanges;
  /**
   * The watch request's caller resolved again, as admission resolves it (authentication, then impersonation), and
   * authorized again; throws when either fails.
   */
  resolveAgain(): Promise<UserInfo>;
  /** The caller the watch began with. */
  caller: UserInfo;
  /** Also checked this often, for what no change announces (a key's expiry). Default 60 s. */
  intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 60_000;

/**
 * A WatchGuard that checks the caller again once it starts, after every announced change (changes arriving together
 * are checked once) and every intervalMs, and stops the watch when the caller is gone or different.
 */
export function watchCallerCheck(options: WatchCallerCheckOptions): WatchGuard {
  let unsubscribe: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  let running = false;
  let again = false;

  const check = async (stop: () => void) => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    do {
      again = false;
      let same: boolean;
      try {
        same = options.changes.same(options.caller, await options.resolveAgain());
      } catch {
        same = false;
      }
      if (!same && !ended) stop();
    } while (again && !ended);
    running = false;
  };

  return {
    start(stop) {
      if (ended) return;
      let scheduled = false;
      const announced = () => {
        if (scheduled || ended) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (!ended) void check(stop);
        });
      };
      unsubscribe = options.changes.subscribe(announced);
      // Once now as well: a change between the caller's admission and this subscription announced nothing here.
      announced();
      timer = setInterval(() => void check(stop), options.intervalMs ?? DEFAULT_INTERVAL_MS);
      timer.unref();
    },
    end() {
      ended = true;
      unsubscribe?.();
      if (timer) clearInterval(timer);
    },
  };
}
