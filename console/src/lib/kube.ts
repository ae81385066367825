// The shapes the console reads and writes: the platform's own types, derived from each kind's schema (the schema
// modules import nothing at run time beyond the schema builders, so the console bundles no server code). The console
// declares no kind of its own: a field the server adds is a field the console sees.

export type { KubeList, KubeObject, ObjectMeta as Meta } from "../../../src/apimachinery/types.ts";
export type { AuditEvent, AuditEventBody } from "../../../src/apis/management/v1/auditevent-schema.ts";
export type { Cluster } from "../../../src/apis/management/v1/cluster-schema.ts";
export type { Config } from "../../../src/apis/management/v1/config-schema.ts";
export type { HelmRelease } from "../../../src/apis/management/v1/helmrelease-schema.ts";
export type {
  AccessKeyScope,
  OwnedAccessKey as AccessKey,
} from "../../../src/apis/management/v1/ownedaccesskey-schema.ts";
export type { Condition, Project } from "../../../src/apis/management/v1/project-schema.ts";
export type { Self } from "../../../src/apis/management/v1/self-schema.ts";
export type { SpaceInstance } from "../../../src/apis/management/v1/spaceinstance-schema.ts";
export type { Team } from "../../../src/apis/management/v1/team-schema.ts";
export type { User } from "../../../src/apis/management/v1/user-schema.ts";
export type { VirtualClusterInstance as Instance } from "../../../src/apis/management/v1/virtualclusterinstance-schema.ts";
