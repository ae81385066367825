// The in-memory RBAC state the authorizer reads: Roles and ClusterRoles by name, and bindings by subject, kept
// fresh from storage by a StoreInformer (store-informer.ts). Only roleRef, subjects and rules are kept.

import type { BindingObject, PolicyRule, RoleObject, Subject } from "../../apis/rbac/v1/common.ts";
import { RBAC_GROUP } from "../../apis/rbac/v1/common.ts";
import type { InformerHandler } from "../../auth/store-informer.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";

const PREFIX = `/${RBAC_GROUP}/`;
const ROLES = `${PREFIX}roles/`;
const CLUSTER_ROLES = `${PREFIX}clusterroles/`;
const ROLE_BINDINGS = `${PREFIX}rolebindings/`;
const CLUSTER_ROLE_BINDINGS = `${PREFIX}clusterrolebindings/`;

/** A binding as the authorizer needs it; `namespace` is empty for ClusterRoleBindings. */
export interface IndexedBinding {
  namespace: string;
  roleKind: string;
  roleName: string;
}

/** `User:alice`, `Group:dev`, `ServiceAccount:ns:name`: how the index names a subject. */
export function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case "User":
    case "Group":
      return `${subject.kind}:${subject.name}`;
    case "ServiceAccount":
      return `ServiceAccount:${subject.namespace || bindingNamespace}:${subject.name}`;
    default:
      return undefined;
  }
}

export class RbacIndex implements InformerHandler {
  readonly prefixes = [ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS];
  /** Rules by `namespace/name` (Roles) and by name (ClusterRoles). */
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** Bindings by storage key, and the keys of the bindings naming each subject. */
  private readonly bindings = new Map<string, { binding: IndexedBinding; subjects: string[] }>();
  private readonly bySubject = new Map<string, Set<string>>();

  reset(records: StoredRecord[]): void {
    this.roles.clear();
    this.clusterRoles.clear();
    this.bindings.clear();
    this.bySubject.clear();
    for (const record of records) this.put(record);
  }

  apply(event: WatchEvent): void {
    if (event.type === "delete") this.remove(event.record.key);
    else this.put(event.record);
  }

  /** The rules of the role a binding names (empty when it does not exist). */
  rulesOf(binding: IndexedBinding): PolicyRule[] {
    if (binding.roleKind === "ClusterRole") return this.clusterRoles.get(binding.roleName) ?? [];
    if (binding.roleKind === "Role" && binding.namespace) {
      return this.roles.get(`${binding.namespace}/${binding.roleName}`) ?? [];
    }
    return [];
  }

  /** The rules of a Role (in `namespace`) or ClusterRole; undefined when it does not exist. */
  roleRules(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    if (kind === "ClusterRole") return this.clusterRoles.get(name);
    if (kind === "Role") return this.roles.get(`${namespace}/${name}`);
    return undefined;
  }

  /** Bindings naming any of `subjects`: cluster-wide ones, and those in `namespace` when given. */
  *bindingsFor(subjects: string[], namespace: string | undefined): Generator<IndexedBinding> {
    const seen = new Set<string>();
    for (const subject of subjects) {
      for (const key of this.bySubject.get(subject) ?? []) {
        if (seen.has(key)) continue;
        seen.add(key);
        const entry = this.bindings.get(key);
        if (!entry) continue;
        const scope = entry.binding.namespace;
        if (scope === "" || (namespace !== undefined && scope === namespace)) yield entry.binding;
      }
    }
  }

  private put(record: StoredRecord): void {
    const { key } = record;
    const parts = key.split("/"); // ["", group, plural, namespace, name]
    const namespace = parts[3] ?? "";
    const name = parts[4] ?? "";
    if (key.startsWith(ROLES) || key.startsWith(CLUSTER_ROLES)) {
      const rules = (JSON.parse(record.value) as RoleObject).rules ?? [];
      if (key.startsWith(ROLES)) this.roles.set(`${namespace}/${name}`, rules);
      else this.clusterRoles.set(name, rules);
      return;
    }
    this.remove(key);
    const object = JSON.parse(record.value) as BindingObject;
    const binding: IndexedBinding = {
      namespace: key.startsWith(ROLE_BINDINGS) ? namespace : "",
      roleKind: object.roleRef?.kind ?? "",
      roleName: object.roleRef?.name ?? "",
    };
    const subjects = (object.subjects ?? [])
      .map((s) => subjectKey(s, binding.namespace))
      .filter((s): s is string => s !== undefined);
    this.bindings.set(key, { binding, subjects });
    for (const subject of subjects) {
      let keys = this.bySubject.get(subject);
      if (!keys) {
        keys = new Set();
        this.bySubject.set(subject, keys);
      }
      keys.add(key);
    }
  }

  private remove(key: string): void {
    const parts = key.split("/");
    if (key.startsWith(ROLES)) {
      this.roles.delete(`${parts[3]}/${parts[4]}`);
      return;
    }
    if (key.startsWith(CLUSTER_ROLES)) {
      this.clusterRoles.delete(parts[4] ?? "");
      return;
    }
    const entry = this.bindings.get(key);
    if (!entry) return;
    this.bindings.delete(key);
    for (const subject of entry.subjects) {
      const keys = this.bySubject.get(subject);
      keys?.delete(key);
      if (keys?.size === 0) this.bySubject.delete(subject);
    }
  }
}
