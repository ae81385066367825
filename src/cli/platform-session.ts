// The client for the stored login: read the config, require a key, talk to that platform.

import { readClientConfig, requireLogin } from "./client-config.ts";
import { PlatformClient } from "./platform-client.ts";

export function loggedInClient(): PlatformClient {
  return new PlatformClient(requireLogin(readClientConfig()));
}
