import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { type KindHarness, kindHarness } from "../../core/v1/testing.ts";
import { clusterRoleDefinition } from "./clusterrole.ts";
import { clusterRoleBindingDefinition } from "./clusterrolebinding.ts";
import type { BindingObject, RoleObject } from "./common.ts";
import { roleDefinition } from "./role.ts";
import { roleBindingDefinition } from "./rolebinding.ts";

const API = "rbac.authorization.k8s.io/v1";
const any = (d: unknown) => d as ResourceDefinition;
const rules = [{ apiGroups: [""], resources: ["services"], verbs: ["get"] }];
const roleRef = (kind: string, name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind, name });

describeResourceConformance({
  definition: any(roleDefinition),
  sample: (name) => ({ apiVersion: API, kind: "Role", metadata: { name }, rules }),
  changeSpec: (o) => {
    (o as RoleObject).rules = [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }];
  },
});
describeResourceConformance({
  definition: any(clusterRoleDefinition),
  sample: (name) => ({ apiVersion: API, kind: "ClusterRole", metadata: { name }, rules }),
  changeSpec: (o) => {
    (o as RoleObject).rules = [{ nonResourceURLs: ["/healthz"], verbs: ["get"] }];
  },
});
describeResourceConformance({
  definition: any(roleBindingDefinition),
  sample: (name) => ({
    apiVersion: API,
    kind: "RoleBinding",
    metadata: { name },
    roleRef: roleRef("Role", "reader"),
    subjects: [{ kind: "User", name: "alice" }],
  }),
  changeSpec: (o) => {
    (o as BindingObject).subjects = [{ kind: "Group", name: "devs" }];
  },
});
describeResourceConformance({
  definition: any(clusterRoleBindingDefinition),
  sample: (name) => ({
    apiVersion: API,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: roleRef("ClusterRole", "view"),
    subjects: [{ kind: "ServiceAccount", name: "robot", namespace: "ops" }],
  }),
  changeSpec: (o) => {
    (o as BindingObject).subjects = [{ kind: "User", name: "bob" }];
  },
});

describe("Role and ClusterRole", () => {
  let roles: KindHarness;
  let clusterRoles: KindHarness;
  before(async () => {
    roles = await kindHarness(any(roleDefinition));
    clusterRoles = await kindHarness(any(clusterRoleDefinition));
  });
  after(async () => {
    await roles.close();
    await clusterRoles.close();
  });

  it("create() takes path-segment names such as system:controller:x, and refuses '/' and '%'", async () => {
    const created = await clusterRoles.create({
      apiVersion: API,
      kind: "ClusterRole",
      metadata: { name: "system:controller:endpoints" },
      rules,
    });
    assert.equal(created.metadata.name, "system:controller:endpoints");
    const errors = await clusterRoles.invalid(
      clusterRoles.create({ apiVersion: API, kind: "ClusterRole", metadata: { name: "a/b%c" }, rules }),
    );
    assert.deepEqual(errors, [
      "metadata.name: Invalid value: \"a/b%c\": may not contain '/'",
      "metadata.name: Invalid value: \"a/b%c\": may not contain '%'",
    ]);
  });

  it("create() requires verbs, and apiGroups and resources for resource rules", async () => {
    const errors = await roles.invalid(
      roles.create({
        apiVersion: API,
        kind: "Role",
        metadata: { name: "r", namespace: "default" },
        rules: [{ verbs: [] }],
      }),
    );
    assert.deepEqual(errors, [
      "rules[0].verbs: Required value: verbs must contain at least one value",
      "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
      "rules[0].resources: Required value: resource rules must supply at least one resource",
    ]);
  });

  it("a Role may not name non-resource URLs; a ClusterRole may, but not together with resources", async () => {
    assert.deepEqual(
      await roles.invalid(
        roles.create({
          apiVersion: API,
          kind: "Role",
          metadata: { name: "urls", namespace: "default" },
          rules: [{ nonResourceURLs: ["/healthz"], verbs: ["get"] }],
        }),
      ),
      [
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
      ],
    );
    assert.deepEqual(
      await clusterRoles.invalid(
        clusterRoles.create({
          apiVersion: API,
          kind: "ClusterRole",
          metadata: { name: "mixed" },
          rules: [{ nonResourceURLs: ["/metrics"], resources: ["pods"], verbs: ["get"] }],
        }),
      ),
      [
        'rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: rules cannot apply to both regular resources and non-resource URLs',
      ],
    );
  });
});

describe("RoleBinding and ClusterRoleBinding", () => {
  let bindings: KindHarness;
  let clusterBindings: KindHarness;
  before(async () => {
    bindings = await kindHarness(any(roleBindingDefinition));
    clusterBindings = await kindHarness(any(clusterRoleBindingDefinition));
  });
  after(async () => {
    await bindings.close();
    await clusterBindings.close();
  });

  const binding = (name: string, fields: Partial<BindingObject>): BindingObject => ({
    apiVersion: API,
    kind: "RoleBinding",
    metadata: { name, namespace: "default" },
    roleRef: roleRef("ClusterRole", "view"),
    ...fields,
  });

  it("create() defaults subject API groups and the roleRef group", async () => {
    const created = (await bindings.create(
      binding("defaults", {
        roleRef: { apiGroup: "", kind: "Role", name: "reader" },
        subjects: [
          { kind: "User", name: "alice" },
          { kind: "ServiceAccount", name: "robot" },
        ],
      }),
    )) as BindingObject;
    assert.equal(created.roleRef?.apiGroup, "rbac.authorization.k8s.io");
    assert.deepEqual(
      created.subjects?.map((s) => s.apiGroup),
      ["rbac.authorization.k8s.io", ""],
    );
  });

  it("create() validates roleRef and subjects", async () => {
    const errors = await bindings.invalid(
      bindings.create(
        binding("bad", {
          roleRef: { apiGroup: "example.com", kind: "Secret", name: "" },
          subjects: [
            { kind: "Robot", name: "r2" },
            { kind: "ServiceAccount", name: "Bad_Name", apiGroup: "rbac.authorization.k8s.io" },
          ],
        }),
      ),
    );
    assert.deepEqual(errors, [
      'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
      "roleRef.name: Required value",
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      `subjects[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'subjects[1].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
    ]);
  });

  it("a ClusterRoleBinding binds only ClusterRoles and needs service account namespaces", async () => {
    const errors = await clusterBindings.invalid(
      clusterBindings.create({
        apiVersion: API,
        kind: "ClusterRoleBinding",
        metadata: { name: "crb" },
        roleRef: roleRef("Role", "reader"),
        subjects: [{ kind: "ServiceAccount", name: "robot" }],
      }),
    );
    assert.deepEqual(errors, [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      "subjects[0].namespace: Required value",
    ]);
  });

  it("update() refuses a changed roleRef", async () => {
    const created = await bindings.create(binding("fixed", { subjects: [{ kind: "User", name: "alice" }] }));
    const changed = { ...structuredClone(created), roleRef: roleRef("ClusterRole", "edit") };
    assert.deepEqual(await bindings.invalid(bindings.update(changed)), [
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ]);
  });
});
