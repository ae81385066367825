// Every platform command's action runs through here: a failure becomes ONE line on stderr and exit code 1, never a
// stack trace (VIRTUALCLUSTER_DEBUG=1 adds it, for bug reports).

import { LifecycleError } from "../virtualcluster/lifecycle/lifecycle-error.ts";
import { PlatformError } from "../virtualcluster/lifecycle/platform-client.ts";
import type { SettingsError } from "../virtualcluster/settings/load.ts";
import type { CommandError } from "./command-error.ts";
import { colorEnabled, styles } from "./terminal.ts";

/** Recognized by name: patches-io.ts brings the YAML parser, which a long-running command never needs. */
function isCommandError(error: unknown): error is CommandError {
  return error instanceof Error && error.name === "CommandError" && Array.isArray((error as CommandError).lines);
}

/**
 * Recognized by name: importing the settings module (its schema, the patch compiler and its sandbox) into every
 * command for an instanceof would cost each long-running process (the platform, the agent) tens of MB.
 */
function isSettingsError(error: unknown): error is SettingsError {
  return error instanceof Error && error.name === "SettingsError" && Array.isArray((error as SettingsError).problems);
}

export function errorLine(error: unknown): string {
  if (isCommandError(error) || error instanceof LifecycleError) return error.lines.join("; ");
  if (error instanceof PlatformError) return error.message;
  if (isSettingsError(error)) return `invalid settings: ${error.problems.join("; ")}`;
  return error instanceof Error ? error.message.split("\n")[0] : String(error);
}

/** Wraps a commander action so that a thrown error prints `error: <one line>` and sets exit code 1. */
export function runAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    try {
      await action(...args);
    } catch (error) {
      const label = styles(colorEnabled(process.stderr)).red("error:");
      process.stderr.write(`${label} ${errorLine(error)}\n`);
      if (process.env.VIRTUALCLUSTER_DEBUG && error instanceof Error && error.stack) {
        process.stderr.write(`${error.stack}\n`);
      }
      process.exitCode = 1;
    }
  };
}
