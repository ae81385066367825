// A resource with no storage (selves, tokens, reviews): the HTTP layer calls its ActionHandler for POST; every
// stored-resource verb answers 405.

import { errors } from "../apimachinery/errors.ts";
import type { KubeList, KubeObject } from "../apimachinery/types.ts";
import type { DeleteResult, ResourceDefinition, ResourceStore, WatchHandle } from "./types.ts";

export class ActionStore implements ResourceStore {
  readonly definition: ResourceDefinition;

  constructor(definition: ResourceDefinition) {
    this.definition = definition;
  }

  private refuse(verb: string): Promise<never> {
    return Promise.reject(
      errors.methodNotSupported({ group: this.definition.group, resource: this.definition.plural }, verb),
    );
  }

  get(): Promise<KubeObject> {
    return this.refuse("get");
  }
  list(): Promise<KubeList> {
    return this.refuse("list");
  }
  watch(): Promise<WatchHandle> {
    return this.refuse("watch");
  }
  create(): Promise<KubeObject> {
    return this.refuse("create");
  }
  update(): Promise<KubeObject> {
    return this.refuse("update");
  }
  patch(): Promise<{ object: KubeObject; created: boolean }> {
    return this.refuse("patch");
  }
  delete(): Promise<DeleteResult> {
    return this.refuse("delete");
  }
  deleteCollection(): Promise<KubeList> {
    return this.refuse("deletecollection");
  }
}
