// Serves `auditevents` from the audit datastore: get by audit ID and list with field selectors and paging, for
// admins only (viewers read every other kind, but audit events show what everyone did and read). A datastore that
// cannot answer is a 503 that says why.

import { errors } from "../apimachinery/errors.ts";
import type { KubeList, KubeObject } from "../apimachinery/types.ts";
import type { AuditLogger } from "../audit/audit-logger.ts";
import { auditEventList, auditEventObject, auditSearchOf } from "../audit/datastore/audit-event-query.ts";
import { ActionStore } from "../registry/action-store.ts";
import type {
  DeleteResult,
  ListOptions,
  ObjectRef,
  RequestContext,
  ResourceDefinition,
  ResourceStore,
  WatchHandle,
} from "../registry/types.ts";

export interface AuditEventStoreOptions {
  audit: Pick<AuditLogger, "search" | "byAuditId">;
  isAdmin(context: RequestContext): boolean;
}

export class AuditEventStore implements ResourceStore {
  readonly definition: ResourceDefinition;
  private readonly options: AuditEventStoreOptions;
  /** Every other verb answers 405, as for a resource with no storage. */
  private readonly refusals: ActionStore;

  constructor(definition: ResourceDefinition, options: AuditEventStoreOptions) {
    this.definition = definition;
    this.options = options;
    this.refusals = new ActionStore(definition);
  }

  watch(): Promise<WatchHandle> {
    return this.refusals.watch();
  }
  create(): Promise<KubeObject> {
    return this.refusals.create();
  }
  update(): Promise<KubeObject> {
    return this.refusals.update();
  }
  patch(): Promise<{ object: KubeObject; created: boolean }> {
    return this.refusals.patch();
  }
  delete(): Promise<DeleteResult> {
    return this.refusals.delete();
  }
  deleteCollection(): Promise<KubeList> {
    return this.refusals.deleteCollection();
  }

  async get(context: RequestContext, ref: ObjectRef): Promise<KubeObject> {
    this.admit(context, ref.name);
    const stages = await this.ask(() => this.options.audit.byAuditId(ref.name));
    const last = stages.at(-1);
    if (!last) throw errors.notFound(this.resource(), ref.name);
    return auditEventObject(last);
  }

  async list(context: RequestContext, options: ListOptions): Promise<KubeList> {
    this.admit(context, "");
    const search = auditSearchOf(options, context.now.getTime());
    const result = await this.ask(() => this.options.audit.search(search));
    return auditEventList(result.events, result.snapshot, result.next);
  }

  private resource() {
    return { group: this.definition.group, resource: this.definition.plural };
  }

  private admit(context: RequestContext, name: string): void {
    if (this.options.isAdmin(context)) return;
    throw errors.forbidden(
      this.resource(),
      name,
      `User "${context.user.name}" cannot read audit events: only platform admins may`,
    );
  }

  private async ask<T>(question: () => Promise<T>): Promise<T> {
    try {
      return await question();
    } catch (error) {
      throw errors.serviceUnavailable(`the audit datastore cannot answer now: ${(error as Error).message}`);
    }
  }
}
