import type { Translator } from "../translate/translator.ts";

/** `reference` of a patch: the value at path names another object. */
export interface PatchReference {
  apiVersion?: string;
  /** Relative path to the apiVersion; falls back to apiVersion when not found. */
  apiVersionPath?: string;
  kind?: string;
  /** Relative path to the kind; falls back to kind when not found. */
  kindPath?: string;
  /** Relative path to the name; without it the value at path is the name. */
  namePath?: string;
  /** Relative path to the namespace; when omitted or not found, the object's own (virtual) namespace. */
  namespacePath?: string;
}

/** One item of `sync.toHost.<resource>.patches`. */
export interface Patch {
  path: string;
  /** Applied when writing the host object. */
  expression?: string;
  /** Applied when writing back to the virtual object. */
  reverseExpression?: string;
  reference?: PatchReference;
  /** Treats the value as a label selector (an empty object: `labels: {}`). */
  labels?: Record<string, never>;
}

export type Direction = "toHost" | "toVirtual";

/** `context.vcluster` of expressions. */
export interface VirtualClusterInfo {
  name: string;
  namespace: string;
  /** The settings merged with their defaults. */
  config: unknown;
}

export interface PatchContext {
  vcluster: VirtualClusterInfo;
  /** null when unavailable. */
  hostObject?: unknown;
  /** null when unavailable. */
  virtualObject?: unknown;
}

export interface ApplyOptions {
  direction: Direction;
  context: PatchContext;
  translator: Translator;
  /**
   * Virtual namespace of the object being synced (references without a namespace point into it). Defaults to
   * context.virtualObject's namespace, or in the toHost direction to the patched object's own namespace.
   */
  namespace?: string;
}

/** An object a reference patch pointed at: the syncer makes sure it is synced too. */
export interface ReferencedObject {
  apiVersion: string;
  kind: string;
  /** The object on the side being read (virtual for toHost, host for toVirtual). */
  source: { name: string; namespace: string };
  /** The name written into the patched object: the object on the side being written. */
  target: { name: string; namespace: string };
  /** The patch, e.g. `sync.toHost.endpoints.patches[1]`. */
  patch: string;
  /** `context.path` of the reference in the patched object. */
  path: string;
}

export interface ApplyResult {
  object: Record<string, unknown>;
  references: ReferencedObject[];
}
