// `platform start --store etcd`: the etcd flags (as kube-apiserver's --etcd-servers, --etcd-cafile,
// --etcd-certfile, --etcd-keyfile, --etcd-prefix) turned into an open EtcdStore. Every replica on the same etcd
// and prefix serves the same platform; they must share the encryption key file (and, for one kubeconfig that works
// everywhere, the CA and serving certificate): see README "Several replicas on etcd".

import { readFile } from "node:fs/promises";
import type { EtcdTls } from "../storage/etcd/etcd-client.ts";
import { type EtcdStore, openEtcdStore } from "../storage/etcd/etcd-store.ts";

export interface EtcdBackendOptions {
  kind: "etcd";
  /** Client URLs of the etcd members. */
  endpoints: string[];
  /** PEM files: the CA of the members' certificates, and this client's certificate and key (mutual TLS). */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** Key prefix in etcd (default /virtualcluster-platform). */
  prefix?: string;
}

export async function openEtcdBackend(options: EtcdBackendOptions): Promise<EtcdStore> {
  return openEtcdStore({ endpoints: options.endpoints, tls: await readEtcdTls(options), prefix: options.prefix });
}

/** The PEM files of the flags, read (an unreadable one is named in the error). */
export async function readEtcdTls(options: EtcdBackendOptions): Promise<EtcdTls> {
  if (Boolean(options.certFile) !== Boolean(options.keyFile)) {
    throw new Error("--etcd-certfile and --etcd-keyfile go together");
  }
  const read = async (file: string | undefined, flag: string) => {
    if (!file) return undefined;
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      throw new Error(`${flag} ${file} cannot be read: ${(error as Error).message}`);
    }
  };
  return {
    ca: await read(options.caFile, "--etcd-cafile"),
    cert: await read(options.certFile, "--etcd-certfile"),
    key: await read(options.keyFile, "--etcd-keyfile"),
  };
}
