// What callers see of a store whose objects are read by membership (projects, virtual cluster instances): whoever
// may read every object (admins, viewers) sees them all; everybody else lists and watches only the objects it may
// read, as OpenShift lists "the projects you can see". A watcher whose membership is taken away gets the object
// DELETED, one added as a member gets it ADDED (the narrowing works like a selector, ListOptions.visible). Reads,
// writes and deletes by name are the authorizer's alone.

import type { KubeList, KubeObject } from "../apimachinery/types.ts";
import { EncodedJson } from "../registry/encoded-json.ts";
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
  UserInfo,
  WatchHandle,
  WatchOptions,
  WatchSink,
  WriteOptions,
} from "../registry/types.ts";

export interface Visibility {
  /** Whether the caller may read every object of the kind (its lists are then not narrowed). */
  readsAll(user: UserInfo): boolean;
  /** Whether the caller may read this object. */
  sees(user: UserInfo, object: KubeObject): boolean;
}

export class VisibleObjectsView implements ResourceStore {
  readonly definition: ResourceDefinition;
  private readonly inner: ResourceStore;
  private readonly visibility: Visibility;

  constructor(inner: ResourceStore, visibility: Visibility) {
    this.inner = inner;
    this.definition = inner.definition;
    this.visibility = visibility;
  }

  private narrow<T extends ListOptions>(context: RequestContext, options: T): T {
    const user = context.user;
    if (this.visibility.readsAll(user)) return options;
    return { ...options, visible: (object: KubeObject) => this.visibility.sees(user, object) };
  }

  list(context: RequestContext, options: ListOptions): Promise<KubeList> {
    return this.inner.list(context, this.narrow(context, options));
  }

  listEncoded(context: RequestContext, options: ListOptions): Promise<EncodedJson> {
    const narrowed = this.narrow(context, options);
    if (this.inner.listEncoded) return this.inner.listEncoded(context, narrowed);
    return this.inner.list(context, narrowed).then((list) => new EncodedJson(JSON.stringify(list)));
  }

  watch(context: RequestContext, options: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    return this.inner.watch(context, this.narrow(context, options), sink);
  }

  get(context: RequestContext, ref: ObjectRef): Promise<KubeObject> {
    return this.inner.get(context, ref);
  }

  create(context: RequestContext, namespace: string | undefined, object: unknown, options: WriteOptions) {
    return this.inner.create(context, namespace, object, options);
  }

  update(context: RequestContext, ref: ObjectRef, object: unknown, options: WriteOptions) {
    return this.inner.update(context, ref, object, options);
  }

  patch(context: RequestContext, ref: ObjectRef, type: PatchType, body: unknown, options: PatchOptions) {
    return this.inner.patch(context, ref, type, body, options);
  }

  delete(context: RequestContext, ref: ObjectRef, options: DeleteOptions): Promise<DeleteResult> {
    return this.inner.delete(context, ref, options);
  }

  /** Only callers allowed `deletecollection` get here; they are narrowed all the same. */
  deleteCollection(context: RequestContext, list: ListOptions, options: DeleteOptions): Promise<KubeList> {
    return this.inner.deleteCollection(context, this.narrow(context, list), options);
  }
}
