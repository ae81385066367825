// Writes under way while a server is stopped: workers create Teams one after another until the server stops
// answering (or stop() is called), and keep the names the server acknowledged with 201. A graceful stop loses none of
// those; a create whose answer never came may or may not be stored.

import type { AuthClient } from "./auth-client.ts";
import { API } from "./auth-client.ts";

export interface WriteLoad {
  /** Names of Teams the server answered 201 for, so far. */
  readonly acknowledged: readonly string[];
  /** Resolves once `count` creates were acknowledged (rejects when the writers stopped before). */
  reached(count: number): Promise<void>;
  stop(): void;
  /** Resolves when every worker has stopped; with what ended each one. */
  done: Promise<string[]>;
}

export function createTeamsUntilStopped(client: AuthClient, token: string, prefix: string, workers = 4): WriteLoad {
  const acknowledged: string[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  let stopped = false;
  let next = 0;
  const worker = async (): Promise<string> => {
    while (!stopped) {
      const name = `${prefix}-${next++}`;
      try {
        const reply = await client.send("POST", `${API}/teams`, { token, body: { metadata: { name } } });
        if (reply.status !== 201) return `HTTP ${reply.status}`;
        acknowledged.push(name);
        for (const wait of waiting.filter((w) => acknowledged.length >= w.count)) wait.resolve();
      } catch (error) {
        return (error as NodeJS.ErrnoException).code ?? String(error);
      }
    }
    return "stopped";
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  return {
    acknowledged,
    reached(count) {
      if (acknowledged.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiting.push({ count, resolve });
        done.then((ends) => reject(new Error(`the writers stopped after ${acknowledged.length}: ${ends.join(", ")}`)));
      });
    },
    stop() {
      stopped = true;
    },
    done,
  };
}
