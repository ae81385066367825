// A task the leader replica runs (the shape of src/platform/leader.ts's LeaderTask, declared here so this folder
// imports nothing from the composition root that calls it).

export interface BackgroundTask {
  name: string;
  start(): Promise<void> | void;
  stop(): void;
}
