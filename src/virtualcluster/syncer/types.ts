import type { LabelMap } from "../translate/labels.ts";

/** A Kubernetes object as plain JSON (never a typed client-node model). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeMetadata;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeMetadata {
  name?: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: LabelMap;
  annotations?: LabelMap;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  selfLink?: string;
  [field: string]: unknown;
}

/** The kinds the syncer moves to the host. `resource` is the REST plural, also the first part of a queue key. */
export type SyncedResource = "services" | "endpoints" | "secrets";

export const KIND_OF: Readonly<Record<SyncedResource, string>> = {
  services: "Service",
  endpoints: "Endpoints",
  secrets: "Secret",
};
