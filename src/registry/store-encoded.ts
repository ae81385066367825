// Encoded reads for the generic store: the compact JSON of a stored version as a caller reads it, without decoding
// it where possible. Stored values are the object's JSON without metadata.resourceVersion and (as the store writes
// them) start with apiVersion, kind and metadata; inserting `"resourceVersion":"<revision>"` at the start of
// metadata is then exactly the JSON of the decoded object (only the key order inside metadata differs).
//  - no presentForRead: that splice (values in another key order are decoded and encoded instead);
//  - presentForRead declared independent of the caller: one encoding per stored version, in a bounded LRU;
//  - presentForRead that may depend on the caller: decoded, presented and encoded per read, as before.

import type { KubeObject } from "../apimachinery/types.ts";
import type { StoredRecord } from "../storage/types.ts";
import { EncodedCache } from "./encoded-cache.ts";
import type { RequestContext, Strategy } from "./types.ts";

/** What the encoder needs from its store. */
export interface EncoderHost {
  readonly apiVersion: string;
  readonly kind: string;
  readonly strategy: Strategy;
  decode(record: StoredRecord): KubeObject;
}

/** Default byte budget of one store's encoded cache (only stores whose presentation is cached have one). */
export const DEFAULT_ENCODED_CACHE_BYTES = 8 * 1024 * 1024;
/**
 * Stored texts from this size up are spliced once per version and kept (in their own cache of the same budget):
 * a large object read again and again (one user reading his own 300 KB object on hundreds of connections) then
 * costs no new string per read, which would otherwise be garbage the size of the object on every request.
 */
export const LARGE_TEXT_CHARACTERS = 64 * 1024;

export class ReadEncoder {
  /** `{"apiVersion":…,"kind":…,"metadata":{` of this resource. */
  readonly prefix: string;
  readonly cache?: EncodedCache;
  /** Spliced texts of large stored versions (see LARGE_TEXT_CHARACTERS). */
  private readonly large: EncodedCache;
  private readonly host: EncoderHost;

  constructor(host: EncoderHost, cacheBytes = DEFAULT_ENCODED_CACHE_BYTES) {
    this.host = host;
    this.prefix = `{"apiVersion":${JSON.stringify(host.apiVersion)},"kind":${JSON.stringify(host.kind)},"metadata":{`;
    if (host.strategy.presentForRead && host.strategy.presentForReadIgnoresCaller) {
      this.cache = new EncodedCache(cacheBytes);
    }
    this.large = new EncodedCache(cacheBytes);
  }

  /** Whether every caller reads the same JSON for a stored version (watch events may then share one encoding). */
  get callerIndependent(): boolean {
    const strategy = this.host.strategy;
    return !strategy.presentForRead || strategy.presentForReadIgnoresCaller === true;
  }

  /**
   * The compact JSON of `record` as read by `context` (resourceVersion = the record's revision). `decoded` is the
   * record's decoded object when the caller has it already (it may be presented in place).
   */
  encode(record: StoredRecord, context: RequestContext, decoded?: KubeObject): string {
    const strategy = this.host.strategy;
    if (!strategy.presentForRead) {
      return this.spliceKept(record) ?? JSON.stringify(decoded ?? this.host.decode(record));
    }
    const cache = this.cache;
    if (!cache) return JSON.stringify(strategy.presentForRead(decoded ?? this.host.decode(record), context));
    const id = `${record.revision}\u0000${record.key}`;
    let json = cache.get(id);
    if (json === undefined) {
      json = JSON.stringify(strategy.presentForRead(decoded ?? this.host.decode(record), context));
      cache.set(id, json);
    }
    return json;
  }

  /** splice(), kept per stored version for large texts: repeated reads of one version share one string. */
  private spliceKept(record: StoredRecord): string | undefined {
    if (record.value.length < LARGE_TEXT_CHARACTERS) return this.splice(record);
    const id = `${record.revision}\u0000${record.key}`;
    let json = this.large.get(id);
    if (json === undefined) {
      json = this.splice(record);
      if (json !== undefined) this.large.set(id, json);
    }
    return json;
  }

  /** The stored text with its resourceVersion inserted, or undefined when the text is not in canonical order. */
  splice(record: StoredRecord): string | undefined {
    const value = record.value;
    const prefix = this.prefix;
    if (!value.startsWith(prefix)) return undefined;
    const rest = value.slice(prefix.length);
    const version = `"resourceVersion":"${record.revision}"`;
    return rest.charCodeAt(0) === 125 /* } */ ? prefix + version + rest : `${prefix}${version},${rest}`;
  }
}

/**
 * The object in the order the encoder relies on (apiVersion, kind, metadata first). Returns the object itself
 * when it is already in that order, which is the usual case (decodeObject assigns those three first).
 */
export function canonicalOrder(object: KubeObject): KubeObject {
  let i = 0;
  for (const key in object) {
    if (key !== (i === 0 ? "apiVersion" : i === 1 ? "kind" : "metadata")) {
      const { apiVersion, kind, metadata, ...rest } = object;
      return { apiVersion, kind, metadata, ...rest };
    }
    if (++i === 3) return object;
  }
  return object;
}
