// The client's own state: `~/.virtualcluster/config.json` (VIRTUALCLUSTER_HOME relocates the directory). It holds an
// access key, so the directory is 0700 and the file 0600, rewritten whole through a private temporary file.

import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PlatformLogin } from "../virtualcluster/lifecycle/platform-login.ts";
import { virtualclusterHome } from "../virtualcluster/lifecycle/virtualcluster-home.ts";
import { CommandError } from "./command-error.ts";

/** Other commands may add top-level sections; they are kept across rewrites. */
export interface ClientConfig {
  platform?: PlatformLogin;
  [section: string]: unknown;
}

export function configPath(home: string = virtualclusterHome()): string {
  return join(home, "config.json");
}

function invalid(path: string, why: string): never {
  throw new CommandError(`${path}: ${why}; fix the file or remove it and log in again`);
}

/** The stored config; an empty one when the file does not exist. */
export function readClientConfig(path: string = configPath()): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new CommandError(`${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    invalid(path, "not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) invalid(path, "must be a JSON object");
  const config = value as ClientConfig;
  const platform = config.platform as Record<string, unknown> | undefined;
  if (platform !== undefined) {
    if (typeof platform !== "object" || platform === null || typeof platform.host !== "string") {
      invalid(path, "platform.host must be a string");
    }
    for (const field of ["accessKey", "certificateAuthorityData"]) {
      if (platform[field] !== undefined && typeof platform[field] !== "string") {
        invalid(path, `platform.${field} must be a string`);
      }
    }
    if (platform.insecure !== undefined && typeof platform.insecure !== "boolean") {
      invalid(path, "platform.insecure must be true or false");
    }
  }
  return config;
}

/** Writes the whole config with mode 0600 (also when an older file was readable by others). */
export function writeClientConfig(config: ClientConfig, path: string = configPath()): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "w" });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new CommandError(`${path}: cannot write the file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** The stored login, or a CommandError that says how to log in. */
export function requireLogin(config: ClientConfig): PlatformLogin & { accessKey: string } {
  const platform = config.platform;
  if (!platform?.accessKey) {
    throw new CommandError(
      "not logged in to a platform: run `virtualcluster platform login <url> --access-key <key>` first",
    );
  }
  return platform as PlatformLogin & { accessKey: string };
}
