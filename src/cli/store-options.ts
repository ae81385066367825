// The store flags of `platform start` (and the etcd ones of `platform migrate`), as kube-apiserver names them:
// --store sqlite|etcd, --etcd-endpoints URL[,URL...], --etcd-cafile, --etcd-certfile, --etcd-keyfile, --etcd-prefix.

import { type Command, InvalidArgumentError } from "commander";
import type { EtcdBackendOptions } from "../platform/etcd-backend.ts";

export interface EtcdFlags {
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  etcdPrefix?: string;
}

export interface StoreFlags extends EtcdFlags {
  store?: "sqlite" | "etcd";
  etcdEndpoints?: string[];
}

export type EtcdSelection = EtcdBackendOptions;

/** Parses URL[,URL...] into http(s) URLs. */
export function etcdEndpoints(value: string): string[] {
  const endpoints = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  if (endpoints.length === 0) throw new InvalidArgumentError("needs at least one URL");
  for (const endpoint of endpoints) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new InvalidArgumentError(`${endpoint} is not a URL (e.g. https://10.0.0.1:2379)`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new InvalidArgumentError(`${endpoint} is not an http:// or https:// URL`);
    }
  }
  return endpoints;
}

function storeKind(value: string): "sqlite" | "etcd" {
  if (value !== "sqlite" && value !== "etcd") throw new InvalidArgumentError('must be "sqlite" or "etcd"');
  return value;
}

/** --etcd-cafile, --etcd-certfile, --etcd-keyfile and --etcd-prefix. */
export function addEtcdConnectionOptions(command: Command): Command {
  return command
    .option("--etcd-cafile <file>", "CA (PEM) that signed the etcd members' certificates")
    .option("--etcd-certfile <file>", "client certificate (PEM) for mutual TLS with etcd")
    .option("--etcd-keyfile <file>", "key (PEM) of --etcd-certfile")
    .option("--etcd-prefix <prefix>", "key prefix of the platform in etcd", "/virtualcluster-platform");
}

export function addStoreOptions(command: Command): Command {
  command
    .option("--store <kind>", 'where objects are stored: "sqlite" (in --data-dir) or "etcd"', storeKind, "sqlite")
    .option("--etcd-endpoints <urls>", "etcd client URLs, comma-separated (with --store etcd)", etcdEndpoints);
  return addEtcdConnectionOptions(command);
}

/** The etcd store the flags select, undefined for SQLite; an error message for flags that do not fit together. */
export function storeSelection(flags: StoreFlags): EtcdSelection | undefined {
  if (flags.store !== "etcd") {
    if (flags.etcdEndpoints) throw new Error("--etcd-endpoints needs --store etcd");
    return undefined;
  }
  if (!flags.etcdEndpoints) throw new Error("--store etcd needs --etcd-endpoints URL[,URL...]");
  return etcdSelection(flags.etcdEndpoints, flags);
}

export function etcdSelection(endpoints: string[], flags: EtcdFlags): EtcdSelection {
  if (Boolean(flags.etcdCertfile) !== Boolean(flags.etcdKeyfile)) {
    throw new Error("--etcd-certfile and --etcd-keyfile go together");
  }
  return {
    kind: "etcd",
    endpoints,
    caFile: flags.etcdCafile,
    certFile: flags.etcdCertfile,
    keyFile: flags.etcdKeyfile,
    prefix: flags.etcdPrefix,
  };
}
