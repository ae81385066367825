// What callers see of the ownedaccesskeys store: admins and viewers everything, everybody else only its own keys.
// Another user's key answers 404 exactly like a missing one, for every verb, before any validation could tell them
// apart; lists and watches are narrowed with a field selector (so paging and resourceVersions stay exact).

import { errors } from "../apimachinery/errors.ts";
import type { KubeList, KubeObject } from "../apimachinery/types.ts";
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ObjectRef,
  PatchOptions,
  PatchType,
  RequestContext,
  ResourceDefinition,
  ResourceStore,
  WatchHandle,
  WatchOptions,
  WatchSink,
  WriteOptions,
} from "../registry/types.ts";
import type { KeyCaller } from "./key-caller.ts";

export class OwnAccessKeysView implements ResourceStore {
  readonly definition: ResourceDefinition;
  private readonly inner: ResourceStore;
  private readonly caller: KeyCaller;

  constructor(inner: ResourceStore, caller: KeyCaller) {
    this.inner = inner;
    this.definition = inner.definition;
    this.caller = caller;
  }

  /** The field selector term of the caller's own keys; undefined when the caller sees all. */
  private ownSelector(context: RequestContext, manage: boolean): string | undefined {
    if (manage ? this.caller.managesAll(context) : this.caller.readsAll(context)) return undefined;
    const owner = this.caller.owner(context);
    if (owner?.user) return `spec.user=${owner.user}`;
    if (owner?.team) return `spec.team=${owner.team}`;
    // Nobody to own anything: a selector nothing matches.
    return "spec.user=,spec.team=,spec.type=none";
  }

  private narrow<T extends ListOptions>(context: RequestContext, options: T, manage = false): T {
    const own = this.ownSelector(context, manage);
    if (!own) return options;
    return { ...options, fieldSelector: options.fieldSelector ? `${options.fieldSelector},${own}` : own };
  }

  /** 404 unless the caller may see this key (the same 404 as for a missing key). */
  private async visible(context: RequestContext, ref: ObjectRef, manage: boolean): Promise<KubeObject | undefined> {
    if (manage ? this.caller.managesAll(context) : this.caller.readsAll(context)) return undefined;
    const notFound = errors.notFound({ group: this.definition.group, resource: this.definition.plural }, ref.name);
    let object: KubeObject;
    try {
      object = await this.inner.get(context, { name: ref.name });
    } catch {
      throw notFound;
    }
    const spec = object.spec as { user?: string; team?: string } | undefined;
    const owner = this.caller.owner(context);
    const own = owner?.user ? spec?.user === owner.user : owner?.team !== undefined && spec?.team === owner.team;
    if (!own) throw notFound;
    return object;
  }

  async get(context: RequestContext, ref: ObjectRef): Promise<KubeObject> {
    const checked = await this.visible(context, ref, false);
    return checked && !ref.subresource ? checked : this.inner.get(context, ref);
  }

  list(context: RequestContext, options: ListOptions): Promise<KubeList> {
    return this.inner.list(context, this.narrow(context, options));
  }

  watch(context: RequestContext, options: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    return this.inner.watch(context, this.narrow(context, options), sink);
  }

  create(context: RequestContext, namespace: string | undefined, object: unknown, options: WriteOptions) {
    return this.inner.create(context, namespace, object, options);
  }

  async update(context: RequestContext, ref: ObjectRef, object: unknown, options: WriteOptions) {
    await this.visible(context, ref, true);
    return this.inner.update(context, ref, object, options);
  }

  async patch(
    context: RequestContext,
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    await this.visible(context, ref, true);
    return this.inner.patch(context, ref, type, body, options);
  }

  async delete(context: RequestContext, ref: ObjectRef, options: DeleteOptions): Promise<DeleteResult> {
    await this.visible(context, ref, true);
    return this.inner.delete(context, ref, options);
  }

  deleteCollection(context: RequestContext, list: ListOptions, options: DeleteOptions): Promise<KubeList> {
    return this.inner.deleteCollection(context, this.narrow(context, list, true), options);
  }
}
