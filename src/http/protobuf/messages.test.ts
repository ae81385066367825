import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configMapDefinition } from "../../apis/core/v1/configmap.ts";
import { endpointsDefinition } from "../../apis/core/v1/endpoints.ts";
import { eventDefinition } from "../../apis/core/v1/event.ts";
import { namespaceDefinition } from "../../apis/core/v1/namespace.ts";
import { secretDefinition } from "../../apis/core/v1/secret.ts";
import { createServiceDefinition } from "../../apis/core/v1/service.ts";
import type { ServiceAddressAllocator } from "../../apis/core/v1/service-addresses.ts";
import { serviceAccountDefinition } from "../../apis/core/v1/serviceaccount.ts";
import { clusterRoleDefinition } from "../../apis/rbac/v1/clusterrole.ts";
import { clusterRoleBindingDefinition } from "../../apis/rbac/v1/clusterrolebinding.ts";
import { roleDefinition } from "../../apis/rbac/v1/role.ts";
import { roleBindingDefinition } from "../../apis/rbac/v1/rolebinding.ts";
import type { ResourceDefinition } from "../../registry/types.ts";
import { compileMessageTables } from "./message-schema.ts";
import { DELETE_OPTIONS_MESSAGE, protobufMessage } from "./messages.ts";

const PACKAGES: Record<string, string> = {
  "": "k8s.io.api.core.v1",
  "rbac.authorization.k8s.io": "k8s.io.api.rbac.v1",
};

describe("protobufMessage()", () => {
  it("protobufMessage() knows the message of every core/v1 and rbac/v1 kind the cluster API server serves", () => {
    const definitions = [
      namespaceDefinition,
      createServiceDefinition({} as ServiceAddressAllocator),
      endpointsDefinition,
      secretDefinition,
      configMapDefinition,
      serviceAccountDefinition,
      eventDefinition,
      roleDefinition,
      clusterRoleDefinition,
      roleBindingDefinition,
      clusterRoleBindingDefinition,
    ] as unknown as ResourceDefinition[];
    for (const definition of definitions) {
      const expected = `${PACKAGES[definition.group]}.${definition.kind}`;
      assert.equal(definition.protobuf?.message, expected, definition.kind);
      assert.equal(protobufMessage(expected)?.name, expected);
    }
    assert.ok(protobufMessage(DELETE_OPTIONS_MESSAGE)?.fields.has(1));
    assert.equal(protobufMessage("k8s.io.api.apps.v1.Deployment"), undefined);
  });
});

describe("compileMessageTables()", () => {
  it("compileMessageTables() links message fields across packages by alias", () => {
    const all = compileMessageTables([
      { package: "k8s.io.apimachinery.pkg.apis.meta.v1", messages: { ObjectMeta: "1 name" } },
      { package: "p", messages: { A: "1 metadata meta.ObjectMeta, 2 items []B, 3 count! int32", B: "1 x bytes" } },
    ]);
    const a = all.get("p.A");
    assert.ok(a);
    const metadata = a.fields.get(1);
    assert.equal(
      metadata?.type.kind === "message" && metadata.type.message.name,
      "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    );
    assert.deepEqual(
      [...a.fields.values()].map((f) => [f.number, f.name, f.repeated, f.keepZero]),
      [
        [1, "metadata", false, false],
        [2, "items", true, false],
        [3, "count", false, true],
      ],
    );
  });

  it("compileMessageTables() refuses unknown types, duplicate fields, unreadable entries and repeated numbers", () => {
    const compile = (messages: Record<string, string>) => () => compileMessageTables([{ package: "p", messages }]);
    assert.throws(compile({ A: "1 x Missing" }), /A field "1 x Missing" refers to unknown message Missing/);
    assert.throws(compile({ A: "1 x, 1 y" }), /defined twice/);
    assert.throws(compile({ A: "1 x, 2 x" }), /defined twice/);
    assert.throws(compile({ A: "one x" }), /cannot read A field "one x"/);
    assert.throws(compile({ A: "1 x []int32" }), /repeated map or number/);
  });
});
