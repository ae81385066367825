// Where this machine keeps what the CLI and its virtual clusters store: ~/.virtualcluster, or VIRTUALCLUSTER_HOME.

import { homedir } from "node:os";
import { join } from "node:path";

export function virtualclusterHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.VIRTUALCLUSTER_HOME || join(homedir(), ".virtualcluster");
}
