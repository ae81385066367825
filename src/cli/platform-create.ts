// `virtualcluster platform create accesskey NAME`: POST ownedaccesskeys and print the key, which the platform
// returns only in this one response. By default stdout carries the key alone (KEY=$(...) works); -o yaml|json prints
// the created object, key included.

import { type Command, Option } from "commander";
import { API_GROUP_PATH } from "../virtualcluster/lifecycle/platform-client.ts";
import { CommandError } from "./command-error.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import { formatData, withoutManagedFields } from "./output.ts";
import { loggedInClient } from "./platform-session.ts";
import { runAction } from "./run-action.ts";

export const CREATE_KEY_FORMATS = ["key", "yaml", "json"] as const;

interface AccessKeyFlags {
  virtualclusterRole?: boolean;
  project: string[];
  expireAfter?: number;
  user?: string;
  displayName?: string;
  output: (typeof CREATE_KEY_FORMATS)[number];
}

interface CreatedKey {
  metadata?: { name?: string };
  spec?: { key?: string; user?: string; team?: string; ttl?: number };
}

/** The OwnedAccessKey to POST for these flags. */
export function accessKeyBody(name: string, flags: Omit<AccessKeyFlags, "output">): Record<string, unknown> {
  if (flags.project.length > 0 && !flags.virtualclusterRole) {
    throw new CommandError("--project limits a --virtualcluster-role key: add --virtualcluster-role");
  }
  const spec: Record<string, unknown> = { type: "User" };
  if (flags.user) spec.user = flags.user;
  // The platform requires a display name: the key's name unless one is given.
  spec.displayName = flags.displayName || name;
  if (flags.expireAfter !== undefined) spec.ttl = flags.expireAfter;
  if (flags.virtualclusterRole) {
    spec.scope = { roles: [{ role: "virtualcluster", projects: flags.project.length > 0 ? flags.project : ["*"] }] };
  }
  return { apiVersion: "management.platform.sh/v1", kind: "OwnedAccessKey", metadata: { name }, spec };
}

async function createAccessKey(name: string, flags: AccessKeyFlags): Promise<void> {
  const body = accessKeyBody(name, flags);
  const created = await loggedInClient().request<CreatedKey>("POST", `${API_GROUP_PATH}/ownedaccesskeys`, { body });
  const key = created.spec?.key;
  if (!key) throw new CommandError(`the platform created access key "${name}" but returned no key`);
  if (flags.output !== "key") {
    // As kubectl prints objects: without managedFields.
    process.stdout.write(formatData(withoutManagedFields(created), flags.output));
    return;
  }
  process.stdout.write(`${key}\n`);
  if (process.stderr.isTTY) {
    const owner = created.spec?.user ? `user ${created.spec.user}` : `team ${created.spec?.team ?? ""}`;
    const ttl = created.spec?.ttl ? `, expires in ${formatDuration(created.spec.ttl)}` : "";
    process.stderr.write(`Created access key "${name}" for ${owner}${ttl}. The key is shown only this once.\n`);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function addCreateCommand(platform: Command): void {
  const create = platform.command("create").description("Create platform resources");
  create
    .command("accesskey")
    .description("Create an access key and print it (the platform shows it only this once)")
    .argument("<name>", "object name of the key")
    .option("--virtualcluster-role", "limit the key to the virtualcluster role (what a virtual cluster needs)")
    .option(
      "--project <project>",
      "with --virtualcluster-role: a project it covers (repeatable; default all)",
      collect,
      [],
    )
    .option("--expire-after <duration>", "lifetime, e.g. 12h or 90d (default: no expiry)", parseDuration)
    .option("--user <user>", "owner of the key (default: you; another user needs admin rights)")
    .option("--display-name <name>", "name shown in the UI and audit events (default: NAME)")
    .addOption(
      new Option("-o, --output <format>", "key: just the key; yaml|json: the created object")
        .choices(CREATE_KEY_FORMATS)
        .default("key"),
    )
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster platform create accesskey ci --expire-after 30d
  virtualcluster platform create accesskey vc-shared --virtualcluster-role
  KEY=$(virtualcluster platform create accesskey vc-team-a --virtualcluster-role --project team-a --expire-after 90d)`,
    )
    .action(runAction((name: string, flags: AccessKeyFlags) => createAccessKey(name, flags)));
}
