// JSON and merge patches of one object, queued behind each other, share a commit. Writes of one key run one after
// another (KeyedQueue); instead of one read, one write and one fsync per patch, a round takes every patch queued
// for the key, applies each to the result of the one before (exactly what running them in turn would compute, each
// with its own checks and its own error), and stores the results as consecutive versions in one compare-and-swap
// (KeyValueStore.updateChain): one revision and one watch event per patch, one fsync per round.
//
// A patch whose answer needs the committed state of the object waits for the next round, where it comes first:
// dry runs (they answer the current resourceVersion), patches that mention resourceVersion (a precondition or a
// test against it), JSON patch test/copy/move operations (they could read it), and patches that complete a
// deletion (not an update).

import { isPlainObject, type KubeObject } from "../apimachinery/types.ts";
import type { StoredRecord } from "../storage/types.ts";
import type { KeyedQueue } from "./keyed-queue.ts";
import type { PreparedUpdate } from "./store.ts";
import type { ObjectRef, PatchOptions, RequestContext } from "./types.ts";

export interface ChainedPatch {
  context: RequestContext;
  ref: ObjectRef;
  type: "json" | "merge" | "strategic";
  body: unknown;
  options: PatchOptions;
}

interface Waiting extends ChainedPatch {
  resolve(object: KubeObject): void;
  reject(error: unknown): void;
}

/** What a chain needs from its store. */
export interface ChainHost {
  read(key: string, ref: ObjectRef): Promise<StoredRecord>;
  /** Applies the patch to `base` and prepares the update (throws the request's own errors). */
  prepare(patch: ChainedPatch, base: StoredRecord, committed: boolean): Promise<PreparedUpdate>;
  /** Finishes a patch prepared on the committed record `current` the way an unchained patch finishes. */
  finish(current: StoredRecord, prepared: PreparedUpdate, context: RequestContext): Promise<KubeObject>;
  /** Stores consecutive versions of the key in one compare-and-swap on `expectedRevision`. */
  writeChain(key: string, values: string[], expectedRevision: number): Promise<StoredRecord[]>;
  encode(object: KubeObject): string;
  present(object: KubeObject, context: RequestContext): KubeObject;
}

/** The revision an uncommitted version decodes with; never compared with a real one (see chainable()). */
const PENDING = -1;

export class PatchChains {
  private readonly host: ChainHost;
  private readonly queue: KeyedQueue;
  /** Patches waiting for the next round, per key. */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(host: ChainHost, queue: KeyedQueue) {
    this.host = host;
    this.queue = queue;
  }

  submit(key: string, patch: ChainedPatch): Promise<KubeObject> {
    return new Promise((resolve, reject) => {
      let list = this.waiting.get(key);
      if (!list) {
        list = [];
        this.waiting.set(key, list);
        void this.queue.run(key, () => this.round(key));
      }
      list.push({ ...patch, resolve, reject });
    });
  }

  /** Takes every patch queued for the key so far and answers each of them. */
  private async round(key: string): Promise<void> {
    let rest = this.waiting.get(key) ?? [];
    this.waiting.delete(key);
    while (rest.length > 0) {
      try {
        rest = await this.step(key, rest);
      } catch (error) {
        for (const patch of rest) patch.reject(error);
        return;
      }
    }
  }

  /** One read and at most one write: answers a prefix of `patches`, returns the rest. */
  private async step(key: string, patches: Waiting[]): Promise<Waiting[]> {
    const first = patches[0];
    let current: StoredRecord;
    try {
      current = await this.host.read(key, first.ref);
    } catch (error) {
      // Not found: the same answer for each of them.
      for (const patch of patches) patch.reject(error);
      return [];
    }
    let base = current;
    const written: { patch: Waiting; object: KubeObject; value: string }[] = [];
    /** Unchanged patches after a write answer that write's result. */
    const same: { patch: Waiting; after: number }[] = [];
    let i = 0;
    for (; i < patches.length; i++) {
      const patch = patches[i];
      const committed = written.length === 0;
      if (!committed && !chainable(patch)) break;
      const warnings = patch.context.warnings.length;
      let prepared: PreparedUpdate;
      try {
        prepared = await this.host.prepare(patch, base, committed);
      } catch (error) {
        patch.reject(error);
        continue;
      }
      if (prepared.kind === "write") {
        const value = this.host.encode(prepared.object);
        written.push({ patch, object: prepared.object, value });
        base = { key, value, revision: PENDING, createRevision: current.createRevision };
      } else if (!committed) {
        if (prepared.kind !== "unchanged") {
          // Runs again first in the next step: its warnings would be reported twice.
          patch.context.warnings.length = warnings;
          break;
        }
        same.push({ patch, after: written.length - 1 });
      } else {
        // First in the round on the committed state: exactly the unchained path.
        try {
          patch.resolve(await this.host.finish(current, prepared, patch.context));
        } catch (error) {
          patch.reject(error);
        }
        if (prepared.kind === "delete") {
          i++;
          break;
        }
      }
    }
    if (written.length > 0) {
      let records: StoredRecord[];
      try {
        records = await this.host.writeChain(
          key,
          written.map((w) => w.value),
          current.revision,
        );
      } catch (error) {
        for (const w of written) w.patch.reject(error);
        for (const s of same) s.patch.reject(error);
        return patches.slice(i);
      }
      written.forEach((w, n) => {
        w.object.metadata.resourceVersion = String(records[n].revision);
      });
      // The unchanged ones first, while the objects are still unshared.
      for (const s of same)
        s.patch.resolve(this.host.present(structuredClone(written[s.after].object), s.patch.context));
      for (const w of written) w.patch.resolve(this.host.present(w.object, w.patch.context));
    }
    return patches.slice(i);
  }
}

/** Whether a patch may be applied to a version that is not committed yet (see the top of this file). */
function chainable(patch: ChainedPatch): boolean {
  if (patch.options.dryRun) return false;
  const body = patch.body;
  if (patch.type === "merge" || patch.type === "strategic") {
    if (!isPlainObject(body)) return true;
    const metadata = body.metadata;
    return !(isPlainObject(metadata) && Object.hasOwn(metadata, "resourceVersion"));
  }
  if (!Array.isArray(body)) return true;
  return body.every(
    (op) =>
      isPlainObject(op) &&
      (op.op === "add" || op.op === "replace" || op.op === "remove") &&
      typeof op.path === "string" &&
      !op.path.includes("resourceVersion"),
  );
}
