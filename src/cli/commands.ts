// The top-level commands by name, each loaded on demand: a process loads only the command it runs, so the other
// commands' modules do not stay in every long-running process (`run`, `apiserver`, `platform start`).

import type { Command } from "commander";

export const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  create: async () => (await import("./create.ts")).createCommand(),
  delete: async () => (await import("./delete.ts")).deleteCommand(),
  list: async () => (await import("./list.ts")).listCommand(),
  pause: async () => (await import("./pause.ts")).pauseCommand(),
  resume: async () => (await import("./resume.ts")).resumeCommand(),
  connect: async () => (await import("./connect.ts")).connectCommand(),
  platform: async () => (await import("./platform.ts")).platformCommand(),
  patches: async () => (await import("./patches.ts")).patchesCommand(),
  config: async () => (await import("./settings.ts")).settingsCommand(),
  apiserver: async () => (await import("./apiserver.ts")).apiserverCommand(),
  run: async () => (await import("./run.ts")).runCommand(),
  cluster: async () => (await import("./cluster.ts")).clusterCommand(),
  agent: async () => (await import("./agent.ts")).agentCommand(),
  version: async () => (await import("./version.ts")).versionCommand(),
};

/** The commands to load for these arguments: the one named first, else (help, completion, a typo) all of them. */
export function commandsFor(argv: readonly string[]): string[] {
  const requested = argv[2];
  return requested !== undefined && Object.hasOwn(COMMANDS, requested) ? [requested] : Object.keys(COMMANDS);
}
