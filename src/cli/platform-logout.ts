// `virtualcluster platform logout`: POST /auth/logout (the platform deletes the key when it came from a password
// login), then the key is removed from the client config whatever the platform answered.

import type { Command } from "commander";
import { PlatformError, type SelfObject } from "../virtualcluster/lifecycle/platform-client.ts";
import { readClientConfig, writeClientConfig } from "./client-config.ts";
import { CommandError } from "./command-error.ts";
import { LOGOUT_PATH } from "./platform-login.ts";
import { platformClient } from "./platform-session.ts";
import { errorLine, runAction } from "./run-action.ts";

async function logout(): Promise<void> {
  const config = readClientConfig();
  const platform = config.platform;
  if (!platform?.accessKey) {
    process.stdout.write("Not logged in.\n");
    return;
  }
  const client = platformClient(platform);
  let self: SelfObject | undefined;
  let failure: unknown;
  let stale = false;
  try {
    self = await client.self();
    await client.request("POST", LOGOUT_PATH);
  } catch (error) {
    if (error instanceof PlatformError && error.code === 401) stale = true;
    else failure = error;
  }
  delete platform.accessKey;
  writeClientConfig(config);
  if (failure) {
    throw new CommandError(
      `the key was removed from this machine, but the platform could not be told (${errorLine(failure)}); it stays valid until it expires`,
    );
  }
  const status = self?.status;
  let note = "";
  if (stale) note = " (the key was no longer valid)";
  else if (status?.accessKeyType !== "Login") {
    note = `; the access key "${status?.accessKey ?? ""}" was not made by a login, so it stays valid on the platform`;
  }
  process.stdout.write(`Logged out of ${platform.host}${note}\n`);
}

export function addLogoutCommand(platform: Command): void {
  platform
    .command("logout")
    .description("Log out: remove the key here (and a login's key on the platform)")
    .addHelpText("after", "\nExamples:\n  virtualcluster platform logout")
    .action(runAction(logout));
}
