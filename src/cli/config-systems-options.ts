// `platform start`'s flags for the Config's systems: the maintenance window's check interval and scheduled key
// rotations (cloud), and the Prometheus of cost control (--prometheus-binary, --prometheus-url).

import { type Command, InvalidArgumentError } from "commander";
import type { ConfigSystemsOptions } from "../platform/config-systems/config-systems.ts";
import { parseDuration } from "./duration.ts";

export interface ConfigSystemsFlags {
  maintenanceCheckInterval?: number;
  signingKeyRotationInterval?: number;
  encryptionKeyRotationInterval?: number;
  prometheusBinary?: string;
  prometheusUrl?: string;
}

function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("must be an http(s) address, e.g. http://127.0.0.1:9090");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidArgumentError("must be an http(s) address, e.g. http://127.0.0.1:9090");
  }
  return value.replace(/\/+$/, "");
}

export function addConfigSystemsOptions(command: Command): Command {
  return command
    .option(
      "--signing-key-rotation-interval <duration>",
      "rotate the token-signing key this often (e.g. 30d), inside the Config's maintenance window when it has one",
      parseDuration,
    )
    .option(
      "--encryption-key-rotation-interval <duration>",
      "rotate the store's encryption key this often (e.g. 90d), inside the Config's maintenance window when it has one",
      parseDuration,
    )
    .option(
      "--maintenance-check-interval <duration>",
      "how often the maintenance window is checked (default 1m)",
      parseDuration,
    )
    .option(
      "--prometheus-binary <path>",
      "the Prometheus the platform runs when costControl is enabled (default: prometheus on PATH)",
    )
    .option(
      "--prometheus-url <url>",
      "a Prometheus you run yourself: the platform queries it instead of running one (scrape the platform's /metrics)",
      httpUrl,
    );
}

export function configSystemsOptions(flags: ConfigSystemsFlags): ConfigSystemsOptions {
  const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000);
  return {
    maintenanceCheckIntervalMs: ms(flags.maintenanceCheckInterval),
    signingKeyRotationIntervalMs: ms(flags.signingKeyRotationInterval),
    encryptionKeyRotationIntervalMs: ms(flags.encryptionKeyRotationInterval),
    prometheusBinary: flags.prometheusBinary,
    prometheusUrl: flags.prometheusUrl,
  };
}
