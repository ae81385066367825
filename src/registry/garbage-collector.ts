// The garbage collector of a stand-alone API server: it watches every stored object and
//  - deletes a dependent once all of its owners are gone (Background propagation), and drops dangling owner
//    references from a dependent that still has a live owner;
//  - for an owner deleted with the `orphan` finalizer, removes the owner references from its dependents, then
//    the finalizer;
//  - for an owner deleted with `foregroundDeletion`, deletes its dependents first, then removes the finalizer once no
//    dependent with blockOwnerDeletion is left;
//  - removes objects whose deletion grace period has passed once their finalizers are gone.
// It acts through the stores, so every rule and every watch event is the same as for a client's write.

import { isStatusError } from "../apimachinery/errors.ts";
import type { KubeObject, OwnerReference } from "../apimachinery/types.ts";
import type { StoredRecord, WatchEvent, Watcher } from "../storage/types.ts";
import { parseKey } from "./keys.ts";
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./object-meta.ts";
import type { Registry } from "./registry.ts";
import type { GenericStore } from "./store.ts";
import { systemContext } from "./system-context.ts";
import type { RequestContext } from "./types.ts";

const MANAGER = "garbage-collector";

/** What the collector remembers of each object: only metadata, never the body. */
interface Node {
  key: string;
  uid: string;
  owners: OwnerReference[];
  finalizers: string[];
  deletionTimestamp?: string;
}

export interface GarbageCollectorOptions {
  registry: Registry;
  onError?: (error: unknown, key: string) => void;
}

export class GarbageCollector {
  private readonly registry: Registry;
  private readonly onError: (error: unknown, key: string) => void;
  private readonly nodes = new Map<string, Node>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly queue = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private watcher?: Watcher;
  private draining?: Promise<void>;
  private stopped = false;

  constructor(options: GarbageCollectorOptions) {
    this.registry = options.registry;
    this.onError = options.onError ?? (() => {});
  }

  async start(): Promise<void> {
    const storage = this.registry.storage;
    const snapshot = await storage.list({ prefix: "/" });
    for (const record of snapshot.records) this.observe(record);
    for (const uid of this.nodes.keys()) this.enqueue(uid);
    this.watcher = storage.watch({
      prefix: "/",
      afterRevision: snapshot.revision,
      onEvents: (events) => {
        for (const event of events) this.onEvent(event);
        return true;
      },
      onClose: (reason) => {
        // A closed hub (shutdown) ends the collector; anything else restarts it from a fresh snapshot.
        if (this.stopped || reason.kind === "closed") return;
        this.nodes.clear();
        this.dependents.clear();
        void this.start();
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Resolves once the work queue is empty (tests and shutdown use it). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private onEvent(event: WatchEvent): void {
    if (event.type === "delete") {
      // A delete event carries the object's last value, so its uid identifies the node.
      const uid = uidOf(event.record.value);
      const node = uid ? this.nodes.get(uid) : undefined;
      if (!node) return;
      this.forget(node);
      // Dependents may now be orphans; owners in foreground deletion may now be free.
      for (const dependent of this.dependents.get(node.uid) ?? []) this.enqueue(dependent);
      for (const owner of node.owners) this.enqueue(owner.uid);
      return;
    }
    const node = this.observe(event.record);
    if (node) {
      this.enqueue(node.uid);
      for (const owner of node.owners) if (this.isDeleting(owner.uid)) this.enqueue(owner.uid);
    }
  }

  private observe(record: StoredRecord): Node | undefined {
    const key = record.key;
    const object = this.registry.decodeShared(record);
    const meta = object.metadata;
    if (!meta?.uid) return undefined;
    const old = this.nodes.get(meta.uid);
    if (old) this.unlinkOwners(old);
    const node: Node = {
      key,
      uid: meta.uid,
      owners: Array.isArray(meta.ownerReferences) ? meta.ownerReferences : [],
      finalizers: meta.finalizers ?? [],
      deletionTimestamp: meta.deletionTimestamp,
    };
    this.nodes.set(node.uid, node);
    for (const owner of node.owners) {
      const set = this.dependents.get(owner.uid) ?? new Set<string>();
      set.add(node.uid);
      this.dependents.set(owner.uid, set);
    }
    return node;
  }

  private forget(node: Node): void {
    this.nodes.delete(node.uid);
    this.unlinkOwners(node);
    const timer = this.timers.get(node.uid);
    if (timer) clearTimeout(timer);
    this.timers.delete(node.uid);
  }

  private unlinkOwners(node: Node): void {
    for (const owner of node.owners) {
      const set = this.dependents.get(owner.uid);
      set?.delete(node.uid);
      if (set?.size === 0) this.dependents.delete(owner.uid);
    }
  }

  private isDeleting(uid: string): boolean {
    return Boolean(this.nodes.get(uid)?.deletionTimestamp);
  }

  private enqueue(uid: string): void {
    if (this.stopped) return;
    this.queue.add(uid);
    if (!this.draining) this.draining = this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      const [uid] = this.queue;
      this.queue.delete(uid);
      const node = this.nodes.get(uid);
      if (!node) continue;
      try {
        await this.process(node);
      } catch (error) {
        // Conflicts and races resolve themselves: the write that beat us produces an event that re-enqueues.
        if (!(isStatusError(error) && (error.reason === "NotFound" || error.reason === "Conflict"))) {
          this.onError(error, node.key);
        }
      }
    }
  }

  private async process(node: Node): Promise<void> {
    if (node.deletionTimestamp) {
      if (node.finalizers.includes(ORPHAN_FINALIZER)) return this.orphanDependents(node);
      if (node.finalizers.includes(FOREGROUND_FINALIZER)) return this.deleteDependentsFirst(node);
      if (node.finalizers.length === 0) return this.reapWhenDue(node);
    }
    if (node.owners.length === 0) return;
    const dangling = node.owners.filter((o) => !this.nodes.has(o.uid));
    if (dangling.length === 0) return;
    const target = this.storeFor(node.key);
    if (!target) return;
    const ref = this.refOf(node);
    if (dangling.length === node.owners.length) {
      // Every owner is gone: the dependent goes too. An owner deleted in foreground propagates foreground.
      if (!node.deletionTimestamp) await target.delete(this.context(), ref, { propagationPolicy: "Background" });
      return;
    }
    const goneUids = new Set(dangling.map((o) => o.uid));
    await this.rewrite(target, node, (object) => {
      object.metadata.ownerReferences = (object.metadata.ownerReferences ?? []).filter((o) => !goneUids.has(o.uid));
      if (object.metadata.ownerReferences.length === 0) delete object.metadata.ownerReferences;
    });
  }

  private async orphanDependents(owner: Node): Promise<void> {
    for (const uid of [...(this.dependents.get(owner.uid) ?? [])]) {
      const dependent = this.nodes.get(uid);
      const target = dependent && this.storeFor(dependent.key);
      if (!dependent || !target) continue;
      await this.rewrite(target, dependent, (object) => {
        const refs = (object.metadata.ownerReferences ?? []).filter((o) => o.uid !== owner.uid);
        if (refs.length) object.metadata.ownerReferences = refs;
        else delete object.metadata.ownerReferences;
      });
    }
    await this.removeFinalizer(owner, ORPHAN_FINALIZER);
  }

  private async deleteDependentsFirst(owner: Node): Promise<void> {
    let blocking = 0;
    for (const uid of [...(this.dependents.get(owner.uid) ?? [])]) {
      const dependent = this.nodes.get(uid);
      const target = dependent && this.storeFor(dependent.key);
      if (!dependent || !target) continue;
      const reference = dependent.owners.find((o) => o.uid === owner.uid);
      if (reference?.blockOwnerDeletion) blocking++;
      if (!dependent.deletionTimestamp) {
        await target.delete(this.context(), this.refOf(dependent), {
          propagationPolicy: reference?.blockOwnerDeletion ? "Foreground" : "Background",
        });
      }
    }
    // The owner waits only for dependents that block its deletion; their removal re-enqueues it.
    if (blocking === 0) await this.removeFinalizer(owner, FOREGROUND_FINALIZER);
  }

  private async reapWhenDue(node: Node): Promise<void> {
    const target = this.storeFor(node.key);
    if (!target || !node.deletionTimestamp) return;
    const wait = new Date(node.deletionTimestamp).getTime() - Date.now();
    if (wait > 0) {
      if (!this.timers.has(node.uid)) {
        const timer = setTimeout(() => {
          this.timers.delete(node.uid);
          this.enqueue(node.uid);
        }, wait);
        timer.unref();
        this.timers.set(node.uid, timer);
      }
      return;
    }
    const record = await this.registry.storage.get(node.key);
    if (record) await target.reap(record, new Date());
  }

  private async removeFinalizer(node: Node, finalizer: string): Promise<void> {
    const target = this.storeFor(node.key);
    if (!target) return;
    await this.rewrite(target, node, (object) => {
      const rest = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      if (rest.length) object.metadata.finalizers = rest;
      else delete object.metadata.finalizers;
    });
  }

  /** Read-modify-write through the store's update path (all rules, one event); a lost race is retried by the event. */
  private async rewrite(store: GenericStore, node: Node, change: (object: KubeObject) => void): Promise<void> {
    const current = await this.registry.storage.get(node.key);
    if (!current) return;
    const object = store.decode(current);
    change(object);
    await store.updateDecoded(this.context(), current, object, { manager: MANAGER, dryRun: false });
  }

  private storeFor(key: string): GenericStore | undefined {
    const parts = parseKey(key);
    return parts ? this.registry.genericStore(parts.group, parts.plural) : undefined;
  }

  private refOf(node: Node): { namespace?: string; name: string } {
    const parts = parseKey(node.key);
    return { namespace: parts?.namespace || undefined, name: parts?.name ?? "" };
  }

  private context(): RequestContext {
    return systemContext("system:serviceaccount:kube-system:generic-garbage-collector", MANAGER);
  }
}

function uidOf(value: string): string | undefined {
  try {
    return (JSON.parse(value) as KubeObject).metadata?.uid;
  } catch {
    return undefined;
  }
}
