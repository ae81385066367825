// Which replica runs the background controllers. On SQLite there is one process, always the leader. On etcd the
// replicas elect one through an etcd lease (src/storage/etcd/etcd-election.ts, TTL LEADER_TTL_SECONDS): the garbage
// collector, the login-key sweeper, the project controller, instance liveness and compaction run only there, and move
// to another replica within LEADER_TTL_SECONDS + 0.5 s of the leader's death. Each task is made anew every time
// leadership begins and stopped when it ends.

import { hostname } from "node:os";
import type { Logger } from "pino";
import { EtcdElection } from "../storage/etcd/etcd-election.ts";
import type { EtcdStore } from "../storage/etcd/etcd-store.ts";

export const LEADER_TTL_SECONDS = 5;

export interface LeaderTask {
  name: string;
  start(): Promise<void> | void;
  stop(): void;
}

export interface Leadership {
  readonly leading: boolean;
  /** Who this replica is, as written in the leader record. */
  readonly identity: string;
  /** Runs `make()`'s task while this replica leads (a new one each term). */
  run(make: () => LeaderTask): void;
  /** Stops every task and gives leadership up. */
  stop(): Promise<void>;
}

class Tasks {
  private readonly makers: (() => LeaderTask)[] = [];
  private running: LeaderTask[] = [];
  private leading = false;
  private readonly logger?: Logger;

  constructor(logger?: Logger) {
    this.logger = logger;
  }

  add(make: () => LeaderTask): void {
    this.makers.push(make);
    if (this.leading) this.launch(make);
  }

  change(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) for (const make of this.makers) this.launch(make);
    else this.stopAll();
  }

  stopAll(): void {
    for (const task of this.running) task.stop();
    this.running = [];
  }

  private launch(make: () => LeaderTask): void {
    const task = make();
    this.running.push(task);
    Promise.resolve(task.start()).catch((error) =>
      this.logger?.error({ task: task.name, err: String(error) }, "a leader task failed to start"),
    );
  }
}

/** SQLite: this process is the only one. */
export function soleLeadership(logger?: Logger): Leadership {
  const tasks = new Tasks(logger);
  tasks.change(true);
  return {
    leading: true,
    identity: `${hostname()}/${process.pid}`,
    run: (make) => tasks.add(make),
    async stop() {
      tasks.stopAll();
    },
  };
}

/** etcd: campaign for the platform's leader record; resolves at once (tasks start when this replica wins). */
export function etcdLeadership(options: {
  store: EtcdStore;
  identity: string;
  logger?: Logger;
  ttlSeconds?: number;
}): Leadership {
  const { logger } = options;
  const tasks = new Tasks(logger);
  let lastError = "";
  const election = new EtcdElection({
    client: options.store.client,
    key: options.store.keys.leader("controllers"),
    identity: options.identity,
    ttlSeconds: options.ttlSeconds ?? LEADER_TTL_SECONDS,
    onChange: (leading) => {
      logger?.info({ identity: options.identity }, leading ? "leading: running the controllers" : "no longer leading");
      tasks.change(leading);
    },
    onError: (error) => {
      const message = String(error);
      if (message !== lastError) logger?.warn({ err: message }, "leader election: etcd call failed");
      lastError = message;
    },
  });
  election.start();
  return {
    get leading() {
      return election.leading;
    },
    identity: options.identity,
    run: (make) => tasks.add(make),
    async stop() {
      tasks.stopAll();
      await election.stop();
    },
  };
}
