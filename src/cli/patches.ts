import { Command, Option } from "commander";
import { notStringValue } from "../virtualcluster/patches/apply.ts";
import { PatchApplyError } from "../virtualcluster/patches/errors.ts";
import type { ReferencedObject } from "../virtualcluster/patches/types.ts";
import { loadSettings, readSettingsFile, SettingsError } from "../virtualcluster/settings/load.ts";
import { isMultiNamespace } from "../virtualcluster/settings/multi-namespace.ts";
import { PATCH_LISTS, type PatchedResource } from "../virtualcluster/settings/settings-schema.ts";
import { desiredHostObject, hostObjectForVirtual, type SyncContext } from "../virtualcluster/syncer/desired-state.ts";
import type { WireObject } from "../virtualcluster/syncer/types.ts";
import { OBJECT_NAMESPACE_ANNOTATION } from "../virtualcluster/translate/constants.ts";
import { createTranslator } from "../virtualcluster/translate/translator.ts";
import { CommandError } from "./command-error.ts";
import { stringifyForKubectl } from "./kubectl-yaml.ts";
import { type CommandIO, processIO, readObject } from "./patches-io.ts";

interface ApplyFlags {
  file: string;
  resource: PatchedResource;
  direction: "to-host" | "to-virtual";
  name: string;
  namespace?: string;
  hostObject?: string;
  output: "yaml" | "json";
}

/** Runs an action; user errors become stderr lines and exit code 1 instead of stack traces. */
function guarded<A extends unknown[]>(io: CommandIO, action: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (error) {
      if (error instanceof SettingsError || error instanceof CommandError) {
        const lines = error instanceof SettingsError ? error.problems : error.lines;
        io.stderr(lines.map((line) => `${line}\n`).join(""));
      } else if (error instanceof PatchApplyError) {
        io.stderr(`${error.message}\n`);
      } else {
        io.stderr(`error: ${(error as Error)?.message ?? String(error)}\n`);
      }
      process.exitCode = 1;
    }
  };
}

const metadata = (object: WireObject) => object.metadata ?? {};

function describeReference(reference: ReferencedObject): string {
  const { source, target } = reference;
  return `referenced: ${reference.apiVersion}/${reference.kind} ${source.namespace}/${source.name} -> ${target.namespace}/${target.name} (${reference.patch} at ${reference.path})\n`;
}

/** A list of objects (`kind: List`, or what `kubectl get -o yaml` prints for several): its items, else undefined. */
function listItems(object: Record<string, unknown>): WireObject[] | undefined {
  const kind = object.kind;
  if (typeof kind !== "string" || !kind.endsWith("List") || !Array.isArray(object.items)) return undefined;
  return object.items as WireObject[];
}

/** Label and annotation values must be strings, as the API server requires: refused like kubectl refuses them. */
function checkStringValues(object: WireObject, what: string): void {
  const wrong = notStringValue(object.metadata as Record<string, unknown> | undefined);
  if (wrong) {
    throw new CommandError(
      `${what}: ${wrong.path} must be a string, not ${wrong.type} (YAML reads yes, no, on, off and numbers as ` +
        "other types: quote the value)",
    );
  }
}

async function applyAction(objectFile: string, flags: ApplyFlags, io: CommandIO): Promise<void> {
  const hostNamespace = flags.namespace ?? `virtualcluster-${flags.name}`;
  const input = await readObject(objectFile, io, "object");
  const items = listItems(input);
  const objects = items ?? [input as WireObject];
  objects.forEach((object, i) => {
    checkStringValues(object, items ? `object ${objectFile} items[${i}]` : `object ${objectFile}`);
  });
  const hostObject = flags.hostObject
    ? ((await readObject(flags.hostObject, io, "host object")) as WireObject)
    : undefined;
  const loaded = await loadSettings(readSettingsFile(flags.file), { namespace: hostNamespace });
  try {
    const { settings } = loaded;
    const translator = createTranslator({
      name: flags.name,
      namespace: hostNamespace,
      multiNamespace: isMultiNamespace(settings),
    });
    const context: SyncContext = {
      translator,
      vcluster: { name: flags.name, namespace: hostNamespace, config: settings },
      patches: loaded.patches,
    };
    // The same functions the syncer calls: to-host prints exactly the object it would write.
    const results = objects.map((object) =>
      flags.direction === "to-host"
        ? desiredHostObject(flags.resource, object, hostObject, context)
        : hostObjectForVirtual(
            flags.resource,
            object,
            undefined,
            context,
            // Writing back, the virtual namespace is the one the syncer recorded on the host object.
            metadata(object).annotations?.[OBJECT_NAMESPACE_ANNOTATION],
          ),
    );
    const output = items
      ? { apiVersion: "v1", kind: "List", metadata: {}, items: results.map((result) => result.object) }
      : results[0].object;
    io.stdout(flags.output === "json" ? `${JSON.stringify(output, null, 2)}\n` : stringifyForKubectl(output));
    io.stderr(results.flatMap((result) => result.references.map(describeReference)).join(""));
  } finally {
    loaded.dispose();
  }
}

async function validateAction(flags: { file: string }, io: CommandIO): Promise<void> {
  const loaded = await loadSettings(readSettingsFile(flags.file));
  try {
    const counts = PATCH_LISTS.map(({ resource, path }) => {
      const count = loaded.patches[resource].patches.length;
      return `${path}: ${count} ${count === 1 ? "patch" : "patches"}`;
    });
    io.stdout(`${flags.file}: valid (${counts.join(", ")})\n`);
  } finally {
    loaded.dispose();
  }
}

/** `virtualcluster patches apply|validate`: test sync patches before deploying them. */
export function patchesCommand(io: CommandIO = processIO): Command {
  const command = new Command("patches").description("Test sync patches of virtualcluster.yaml before deploying them");
  command
    .command("apply")
    .description("Apply the sync patches of a settings file to an object and print the patched object")
    .argument("<object>", "object file (YAML or JSON; a List applies to each item), or - for standard input")
    .requiredOption("-f, --file <file>", "settings file (virtualcluster.yaml)")
    .addOption(
      new Option("--resource <resource>", "synced resource whose patches to apply")
        .choices(PATCH_LISTS.map((list) => list.resource))
        .makeOptionMandatory(),
    )
    .addOption(
      new Option("--direction <direction>", "to-host applies expression, to-virtual applies reverseExpression")
        .choices(["to-host", "to-virtual"])
        .default("to-host"),
    )
    .option("--name <name>", "virtual cluster name", "virtualcluster")
    .option("--namespace <namespace>", "host namespace of the virtual cluster (default: virtualcluster-<name>)")
    .option("--host-object <file>", "host object for context.hostObject (YAML or JSON)")
    .addOption(new Option("-o, --output <format>", "output format").choices(["yaml", "json"]).default("yaml"))
    .action(guarded(io, (objectFile: string, flags: ApplyFlags) => applyAction(objectFile, flags, io)));
  command
    .command("validate")
    .description("Check every patch list of a settings file and report all problems")
    .requiredOption("-f, --file <file>", "settings file (virtualcluster.yaml)")
    .action(guarded(io, (flags: { file: string }) => validateAction(flags, io)));
  return command;
}
