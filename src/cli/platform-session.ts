// The platform client as the CLI uses it: the platform's warnings go to stderr; `loggedInClient()` is the one for the
// stored login (read the config, require a key).

import { PlatformClient } from "../virtualcluster/lifecycle/platform-client.ts";
import type { PlatformLogin } from "../virtualcluster/lifecycle/platform-login.ts";
import { readClientConfig, requireLogin } from "./client-config.ts";

export function platformClient(login: PlatformLogin): PlatformClient {
  return new PlatformClient(login, { onWarning: (text) => void process.stderr.write(`Warning: ${text}\n`) });
}

export function loggedInClient(): PlatformClient {
  return platformClient(requireLogin(readClientConfig()));
}
