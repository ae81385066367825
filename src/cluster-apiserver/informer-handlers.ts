// One storage informer feeding several in-memory consumers (RBAC index, service addresses, controllers): each
// sees only the keys under its own prefixes.

import type { ServiceAddresses } from "../apis/core/v1/service-addresses.ts";
import type { Service } from "../apis/core/v1/service-schema.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";

const under = (prefixes: readonly string[], key: string) => prefixes.some((prefix) => key.startsWith(prefix));

export function combineHandlers(handlers: InformerHandler[]): InformerHandler {
  return {
    prefixes: handlers.flatMap((h) => h.prefixes),
    reset(records: StoredRecord[]) {
      // Overlapping prefixes list a key twice; each handler sees it once.
      const unique = [...new Map(records.map((r) => [r.key, r])).values()];
      for (const handler of handlers) handler.reset(unique.filter((r) => under(handler.prefixes, r.key)));
    },
    apply(event: WatchEvent) {
      for (const handler of handlers) if (under(handler.prefixes, event.record.key)) handler.apply(event);
    },
  };
}

/** Feeds the cluster IPs and node ports stored Services hold into the allocator. */
export function serviceAddressHandler(addresses: ServiceAddresses): InformerHandler {
  const parse = (record: StoredRecord) => JSON.parse(record.value) as Service;
  return {
    prefixes: ["/core/services/"],
    reset: (records) => addresses.reset(records.map((record) => ({ key: record.key, service: parse(record) }))),
    apply: (event) => {
      if (event.type === "delete") addresses.remove(event.record.key);
      else addresses.set(event.record.key, parse(event.record));
    },
  };
}
