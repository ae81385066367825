// The resource contract. A resource is a ResourceDefinition: its names, schema, a small strategy, table columns,
// selectable fields and subresources. The generic store (store.ts) owns every shared rule; a strategy only adds
// what is particular to its kind.

import type { FieldError } from "../apimachinery/field-errors.ts";
import type { JsonMap, KubeList, KubeObject, Status } from "../apimachinery/types.ts";
import type { AuthorizationFacts } from "./authorization-facts.ts";
import type { EncodedJson } from "./encoded-json.ts";

/** Who is calling. Built by authentication; read by authorization, strategies and audit. */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  /** Extra attributes (e.g. the access key's object name and scope), never secrets. */
  extra?: Record<string, string[]>;
}

export interface AuthorizationAttributes {
  user: UserInfo;
  verb: string;
  /** Resource requests: */
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests (/version, /healthz...): */
  path?: string;
  resourceRequest: boolean;
}

export interface AuthorizationDecision {
  allowed: boolean;
  /** Why not, phrased to follow "is forbidden: ". */
  reason?: string;
}

/** Verbs on resources, as SelfSubjectRulesReview lists them ("*" means all; no resourceNames: every name). */
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

/** Verbs on non-resource URLs ("/apis/*": everything below). */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What a user may do in a namespace, as far as the authorizer can list it. Every rule listed is allowed. */
export interface SubjectRules {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** True when rights exist that the lists leave out. */
  incomplete: boolean;
  evaluationError?: string;
}

export interface Authorizer {
  authorize(attributes: AuthorizationAttributes): Promise<AuthorizationDecision>;
  /**
   * The rules `user` holds in `namespace` (cluster-scoped resources included), for SelfSubjectRulesReview
   * (`kubectl auth can-i --list`). Without it the review answers an empty, incomplete list.
   */
  rulesFor?(user: UserInfo, namespace: string): Promise<SubjectRules>;
}

/** Per-request context handed to the registry and to strategy hooks. */
export interface RequestContext {
  user: UserInfo;
  authorizer: Authorizer;
  /** Warnings to return in `Warning: 299 - "..."` headers. Hooks may push to it. */
  warnings: string[];
  userAgent?: string;
  /** When the request arrived (used for timestamps, so one request has one "now"). */
  now: Date;
}

export interface TableColumn<T extends KubeObject = KubeObject> {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  format?: string;
  description: string;
  /** 0 = shown by default, >0 = only with -o wide. */
  priority?: number;
  cell(object: T): unknown;
}

/**
 * Strategy hooks, called by the generic store in this order:
 *   create: canonicalize -> prepareForCreate -> (generic metadata rules + schema) -> validate
 *   update: canonicalize -> prepareForUpdate -> (generic rules + schema) -> validate -> validateUpdate
 */
export interface Strategy<T extends KubeObject = KubeObject> {
  /** Normalizes equivalent spellings (sorting sets, trimming). May mutate. Runs first, on create and update. */
  canonicalize?(object: T): void;
  /** Runs on create before validation. May mutate: defaults, clearing status, server-owned fields. */
  prepareForCreate?(object: T, context: RequestContext): void | Promise<void>;
  /** Runs on update before validation. May mutate `object` (not `old`): keep server-owned fields from `old`. */
  prepareForUpdate?(object: T, old: T, context: RequestContext): void | Promise<void>;
  /** Kind-specific checks beyond the schema. Must not mutate. Runs on create and update. */
  validate?(object: T, context: RequestContext): FieldError[] | Promise<FieldError[]>;
  /** Checks comparing new against old (immutable fields). Must not mutate. */
  validateUpdate?(object: T, old: T, context: RequestContext): FieldError[] | Promise<FieldError[]>;
  /** Decides whether a stored object may be deleted now; throw a StatusError to refuse. Must not mutate. */
  beforeDelete?(object: T, context: RequestContext): void | Promise<void>;
  /** Shapes an object for a read (GET, LIST, WATCH, write responses): e.g. blank secret fields. Returns a copy or the same object. */
  presentForRead?(object: T, context: RequestContext): T;
  /**
   * Declares that presentForRead depends only on the object (not on the caller, the time or other state), so one
   * encoding of a stored version may be served to every reader. Leave unset when in doubt: reads then decode,
   * present and encode per request.
   */
  presentForReadIgnoresCaller?: boolean;
}

/** A create-only subresource or resource with no storage of its own (kubeconfig, selves, reviews). */
export interface ActionHandler {
  /** Kind of the request and response object. */
  kind: string;
  /** JSON schema of the object's top-level fields other than apiVersion/kind/metadata (spec, status). */
  schema: JsonMap;
  description: string;
  verbs: ("create" | "get")[];
  /** Set when request bodies may also come as Kubernetes protobuf (kubectl's typed clients), as on definitions. */
  protobuf?: { message: string };
  /**
   * Handles the request. For a subresource `parent` is the stored parent object (already fetched, 404 handled).
   * Returns the response object; the HTTP layer answers 201 for create and 200 for get.
   */
  handle(request: {
    context: RequestContext;
    body: KubeObject | undefined;
    parent?: KubeObject;
    namespace?: string;
  }): Promise<KubeObject>;
}

export interface ResourceDefinition<T extends KubeObject = KubeObject> {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name used in URLs, lower case. */
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  description: string;
  /**
   * JSON schema of the top-level fields other than apiVersion, kind and metadata (usually spec and status).
   * Single source of truth for validation, pruning of unknown fields, OpenAPI and `kubectl explain`.
   */
  schema: JsonMap;
  strategy: Strategy<T>;
  /** Table columns after Name (Age is appended by the table builder unless `noAgeColumn`). */
  columns?: TableColumn<T>[];
  noAgeColumn?: boolean;
  /** Extra field selector keys (metadata.name and metadata.namespace are always supported). */
  selectableFields?: Record<string, (object: T) => string | undefined>;
  /** Whether a `status` subresource exists: then updates to the main resource keep status, and /status keeps spec. */
  statusSubresource?: boolean;
  /** Other subresources by name. */
  subresources?: Record<string, ActionHandler>;
  /** Set for resources with no storage (selves, tokens, reviews): only this handler serves them. */
  action?: ActionHandler;
  /** Set for resources kept outside the key-value store (audit events): the store that serves them instead. */
  serve?: (definition: ResourceDefinition) => ResourceStore;
  /** Restricts the verbs served (default: all of get, list, watch, create, update, patch, delete, deletecollection). */
  verbs?: Verb[];
  /**
   * Set for built-in Kubernetes kinds: request bodies may also come as Kubernetes protobuf
   * (application/vnd.kubernetes.protobuf), decoded by the named message's table in src/http/protobuf/messages.ts.
   */
  protobuf?: { message: string };
  /**
   * Accept strategic merge patches (what kubectl sends for built-in kinds on client-side apply, edit and patch);
   * list merging follows the schema's x-kubernetes-patch-strategy / x-kubernetes-patch-merge-key. Others get 415.
   */
  strategicMergePatch?: boolean;
  /** Name rule: DNS-1123 subdomain (default), or Kubernetes' path-segment rule (RBAC kinds: `system:...` names). */
  nameValidation?: "dns1123-subdomain" | "path-segment";
  /** Owner rights, credentials it mints, fields that grant rights: read by the serving server's identity layer. */
  authorization?: AuthorizationFacts;
  /**
   * A PUT without metadata.resourceVersion replaces whatever is stored, as kube-apiserver's built-in kinds allow
   * (their strategies' AllowUnconditionalUpdate; Helm's release records rely on it). Unset: such a PUT is a 422, as
   * for custom resources.
   */
  allowUnconditionalUpdate?: boolean;
}

/**
 * Asked before a write that adds data: a create, or an update of an object that is not being deleted. Throws a
 * StatusError to refuse it (the platform's store quota). Deletes, the updates that carry them out (deletionTimestamp,
 * finalizers of an object being deleted) and dry runs are never asked, so a full store can still be emptied.
 */
export type WriteGate = () => void;

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface WriteOptions {
  dryRun?: boolean;
  /** Defaults to the User-Agent up to its first "/" (as Kubernetes does). */
  fieldManager?: string;
  fieldValidation?: FieldValidation;
}

export interface ObjectRef {
  /** Empty for cluster-scoped resources. */
  namespace?: string;
  name: string;
  /** "status" for the status subresource; absent for the main resource. */
  subresource?: string;
}

export interface ListOptions {
  /** Absent: all namespaces (or cluster-scoped). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  /**
   * Set by the server, never by a client: the objects this caller may see (a view narrows a list or watch to them).
   * Applied like a selector: paging stays exact, and an object leaving the selection is DELETED for a watcher.
   */
  visible?: (object: KubeObject) => boolean;
}

export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  /** Seconds after which the server ends the watch. */
  timeoutSeconds?: number;
}

export type ApiWatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface ApiWatchEvent {
  type: ApiWatchEventType;
  object: KubeObject | Status;
}

export interface WatchSink {
  /** Return false when the consumer's buffer is full (the store pauses and resumes through `resume`). */
  send(event: ApiWatchEvent): boolean;
  /** Called once when the watch ends from the store's side (slow consumer, compaction, shutdown, timeout). */
  end(reason: "timeout" | "slow" | "closed" | "expired"): void;
}

export interface WatchHandle {
  /** Tells the store the sink can take more after `send` returned false. */
  resume(): void;
  close(): void;
}

export type PatchType = "json" | "merge" | "apply" | "strategic";

export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  dryRun?: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  /** Removed at once: answer 200 with a Success Status. Otherwise answer 200 with the object (deletion pending). */
  removed: boolean;
  object: KubeObject;
}

/** The registry's face to the HTTP layer: one per resource. */
export interface ResourceStore {
  readonly definition: ResourceDefinition;
  get(context: RequestContext, ref: ObjectRef): Promise<KubeObject>;
  list(context: RequestContext, options: ListOptions): Promise<KubeList>;
  watch(context: RequestContext, options: WatchOptions, sink: WatchSink): Promise<WatchHandle>;
  create(
    context: RequestContext,
    namespace: string | undefined,
    object: unknown,
    options: WriteOptions,
  ): Promise<KubeObject>;
  /** PUT. The object must exist (404 otherwise: no create-on-update). */
  update(context: RequestContext, ref: ObjectRef, object: unknown, options: WriteOptions): Promise<KubeObject>;
  /** `created` is true only for server-side apply creating the object (answer 201). */
  patch(
    context: RequestContext,
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }>;
  delete(context: RequestContext, ref: ObjectRef, options: DeleteOptions): Promise<DeleteResult>;
  deleteCollection(context: RequestContext, list: ListOptions, options: DeleteOptions): Promise<KubeList>;
  /** Optional fast paths for compact JSON responses: the same results as get, list and create, already encoded. */
  getEncoded?(context: RequestContext, ref: ObjectRef): Promise<EncodedJson>;
  listEncoded?(context: RequestContext, options: ListOptions): Promise<EncodedJson>;
  createEncoded?(
    context: RequestContext,
    namespace: string | undefined,
    object: unknown,
    options: WriteOptions,
  ): Promise<EncodedJson>;
}
