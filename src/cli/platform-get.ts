// `virtualcluster platform get|list <resource> [NAME]`: tables as the server prints them (Accept: Table), or the
// objects as YAML or JSON. Virtual clusters live in project namespaces; without -n or --project all are listed.

import { type Command, Option } from "commander";
import { API_GROUP_PATH, type PlatformClient, TABLE_ACCEPT } from "../virtualcluster/lifecycle/platform-client.ts";
import { CommandError } from "./command-error.ts";
import { formatData, renderTable, type ServerTable, withoutManagedFields } from "./output.ts";
import { fetchPlatformResources, findResource, type PlatformResource } from "./platform-resources.ts";
import { loggedInClient } from "./platform-session.ts";
import { COMMON_RESOURCES } from "./resource-aliases.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles } from "./terminal.ts";

export const GET_FORMATS = ["table", "wide", "yaml", "json"] as const;
type GetFormat = (typeof GET_FORMATS)[number];
const PAGE = 500;

interface GetFlags {
  output: GetFormat;
  namespace?: string;
  allNamespaces?: boolean;
  project?: string;
  selector?: string;
  showManagedFields?: boolean;
}

interface Listed {
  kind?: string;
  apiVersion?: string;
  metadata?: { continue?: string };
  items?: unknown[];
  rows?: ServerTable["rows"];
  columnDefinitions?: ServerTable["columnDefinitions"];
}

/** Every page of a list (tables merge their rows, lists their items). */
async function listAll(client: PlatformClient, path: string, query: URLSearchParams, table: boolean): Promise<Listed> {
  let merged: Listed | undefined;
  let token = "";
  do {
    const params = new URLSearchParams(query);
    params.set("limit", String(PAGE));
    if (token) params.set("continue", token);
    const page = await client.request<Listed>("GET", `${path}?${params}`, {
      accept: table ? TABLE_ACCEPT : "application/json",
    });
    if (!merged) merged = page;
    else if (table) merged.rows = [...(merged.rows ?? []), ...(page.rows ?? [])];
    else merged.items = [...(merged.items ?? []), ...(page.items ?? [])];
    token = page.metadata?.continue ?? "";
  } while (token);
  if (merged.metadata) delete merged.metadata.continue;
  return merged;
}

async function namespaceOf(client: PlatformClient, resource: PlatformResource, flags: GetFlags) {
  if (!resource.namespaced) return undefined;
  if (flags.project !== undefined) {
    const prefix = (await client.self()).status?.projectNamespacePrefix ?? "p-";
    return `${prefix}${flags.project}`;
  }
  return flags.allNamespaces ? undefined : flags.namespace;
}

async function get(word: string, name: string | undefined, flags: GetFlags): Promise<void> {
  if (flags.allNamespaces && (flags.namespace || flags.project)) {
    throw new CommandError("--all-namespaces cannot be combined with --namespace or --project");
  }
  const client = loggedInClient();
  const resource = findResource(await fetchPlatformResources(client), word);
  if (flags.project !== undefined && !resource.namespaced) {
    throw new CommandError(`--project applies to virtualclusters, not ${resource.name}`);
  }
  const namespace = await namespaceOf(client, resource, flags);
  const path = namespace
    ? `${API_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`
    : `${API_GROUP_PATH}/${resource.plural}`;
  const table = flags.output === "table" || flags.output === "wide";
  const query = new URLSearchParams();
  if (flags.selector) query.set("labelSelector", flags.selector);

  let result: Listed;
  let single = false;
  if (name !== undefined && (namespace || !resource.namespaced)) {
    result = await client.request<Listed>("GET", `${path}/${encodeURIComponent(name)}`, {
      accept: table ? TABLE_ACCEPT : "application/json",
    });
    single = true;
  } else {
    if (name !== undefined) query.set("fieldSelector", `metadata.name=${name}`);
    result = await listAll(client, path, query, table);
    if (name !== undefined) {
      const count = table ? (result.rows?.length ?? 0) : (result.items?.length ?? 0);
      if (count === 0) throw new CommandError(`${resource.name} "${name}" not found`);
      if (count > 1) throw new CommandError(`${count} ${resource.name} are named "${name}": pass --project or -n`);
      if (!table) result = result.items![0] as Listed;
      single = !table;
    }
  }

  if (!table) {
    const shown = flags.showManagedFields ? result : withoutManagedFields(result);
    process.stdout.write(formatData(shown, flags.output as "yaml" | "json"));
    return;
  }
  const text = renderTable(result as ServerTable, {
    wide: flags.output === "wide",
    namespaceColumn: resource.namespaced && !namespace && !single,
    header: styles(colorEnabled(process.stdout)).bold,
  });
  if (text === "") {
    process.stderr.write(
      namespace ? `No ${resource.name} found in namespace ${namespace}.\n` : `No ${resource.name} found.\n`,
    );
  }
  process.stdout.write(text);
}

export function addGetCommand(platform: Command): void {
  const names = COMMON_RESOURCES.join(", ");
  platform
    .command("get")
    .alias("list")
    .description(`Show ${names}`)
    .argument("<resource>", `one of ${names}, or another resource the platform lists`)
    .argument("[name]", "one object by name")
    .addOption(new Option("-o, --output <format>", "output format").choices(GET_FORMATS).default("table"))
    .option("-n, --namespace <namespace>", "namespace of namespaced resources (virtualclusters)")
    .option("-A, --all-namespaces", "list across all namespaces (the default for virtualclusters)")
    .option("--project <project>", "virtualclusters of this project only")
    .option("-l, --selector <selector>", "label selector, e.g. team=web")
    .option("--show-managed-fields", "keep metadata.managedFields in yaml and json output")
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster platform get users
  virtualcluster platform list accesskeys -o wide
  virtualcluster platform get virtualclusters --project default
  virtualcluster platform get user admin -o yaml
  virtualcluster platform get projects -o json`,
    )
    .action(runAction((resource: string, name: string | undefined, flags: GetFlags) => get(resource, name, flags)));
}
