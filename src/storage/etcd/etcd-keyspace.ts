// Where the platform's keys live in etcd, below one prefix (--etcd-prefix, default /virtualcluster-platform):
//   <prefix>/registry<key>   the store's keys (/management.platform.sh/users//alice -> <prefix>/registry/management...)
//   <prefix>/meta/base       written once, first: its revision is the store's revision 0 (see etcd-store.ts)
//   <prefix>/leader/<name>   leader election records (etcd-election.ts)

import { prefixEnd } from "../prefix-end.ts";

export const DEFAULT_ETCD_PREFIX = "/virtualcluster-platform";

export class EtcdKeyspace {
  readonly prefix: string;
  /** The etcd key of the store's key "" (every store key follows it). */
  readonly data: string;
  readonly base: string;

  constructor(prefix = DEFAULT_ETCD_PREFIX) {
    const trimmed = prefix.replace(/\/+$/, "");
    if (!trimmed.startsWith("/")) throw new Error(`etcd prefix "${prefix}" must start with "/"`);
    this.prefix = trimmed;
    this.data = `${trimmed}/registry`;
    this.base = `${trimmed}/meta/base`;
  }

  /** The etcd key of a store key. */
  key(storeKey: string): string {
    return this.data + storeKey;
  }

  /** The store key of an etcd key under the data prefix, or undefined for any other key. */
  storeKey(etcdKey: string): string | undefined {
    return etcdKey.startsWith(this.data) ? etcdKey.slice(this.data.length) : undefined;
  }

  /** The etcd range [key, end) of every key starting with the store prefix. */
  range(storePrefix: string): { key: Uint8Array; end: Uint8Array } {
    const key = this.key(storePrefix);
    return { key: Buffer.from(key, "utf8"), end: prefixEnd(key) };
  }

  /** The election record of `name`. */
  leader(name: string): string {
    return `${this.prefix}/leader/${name}`;
  }

  /** Every key this platform owns in etcd (what migration checks is empty). */
  all(): { key: Uint8Array; end: Uint8Array } {
    const key = `${this.prefix}/`;
    return { key: Buffer.from(key, "utf8"), end: prefixEnd(key) };
  }
}
