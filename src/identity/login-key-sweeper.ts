// Deletes Login keys (from password login) once they are older than loginAccessKeyTTLSeconds (0: kept), the keys of
// the OpenID provider's refresh tokens once their own ttl passed, and both kinds once the user's tokenGeneration or
// session generation revoked them (key-validity.ts). Runs on a timer over the in-memory index; deletes go through the
// store. Other keys a generation revoked stay listed (their owners see why they fail) until deleted.

import type { AuthIndex, KeyEntry } from "./auth-index.ts";
import { REFRESH_TOKEN_KEY_TYPE, revokedBy } from "./key-validity.ts";

export interface LoginKeySweeperOptions {
  index: AuthIndex;
  loginTTLSeconds: () => number;
  remove: (key: KeyEntry) => Promise<void>;
  intervalMs?: number;
  now?: () => number;
  onError?: (error: unknown, key: string) => void;
}

export class LoginKeySweeper {
  private readonly options: LoginKeySweeperOptions;
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(options: LoginKeySweeperOptions) {
    this.options = options;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.options.intervalMs ?? 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass; resolves to the number of keys deleted. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const { index, remove } = this.options;
    const now = (this.options.now ?? Date.now)();
    const ttl = this.options.loginTTLSeconds();
    const due: KeyEntry[] = [];
    for (const key of index.allKeys()) {
      if (key.deleting) continue;
      let expired: boolean;
      if (key.type === "Login") expired = ttl > 0 && now >= key.createdMs + ttl * 1000;
      else if (key.type === REFRESH_TOKEN_KEY_TYPE)
        expired = key.ttlSeconds > 0 && now >= key.createdMs + key.ttlSeconds * 1000;
      else continue;
      const user = key.user ? index.user(key.user) : undefined;
      const revoked = user !== undefined && revokedBy(key, user) !== undefined;
      if (expired || revoked) due.push(key);
    }
    let deleted = 0;
    for (const key of due) {
      try {
        await remove(key);
        deleted++;
      } catch (error) {
        this.options.onError?.(error, key.name);
      }
    }
    return deleted;
  }
}
