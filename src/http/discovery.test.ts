import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AGGREGATED_DISCOVERY_CONTENT_TYPE,
  aggregatedDiscovery,
  aggregatedDiscoveryContentType,
  aggregatedDiscoveryVersion,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  wantsAggregatedDiscovery,
} from "./discovery.ts";
import { allDefinitions, usersDefinition } from "./testing-definitions.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read into untyped JSON documents.
type Json = any;

const KUBECTL_ACCEPT =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

describe("discovery", () => {
  it("apiVersions() lists v1 with the catch-all client CIDR", () => {
    assert.deepEqual(apiVersions(), {
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }],
    });
  });

  it("apiGroupList() lists non-core groups with their preferred version", () => {
    assert.deepEqual(apiGroupList(allDefinitions), {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [
        {
          name: "management.platform.sh",
          versions: [{ groupVersion: "management.platform.sh/v1", version: "v1" }],
          preferredVersion: { groupVersion: "management.platform.sh/v1", version: "v1" },
        },
      ],
    });
  });

  it("apiGroupList() prefers GA over beta over alpha versions", () => {
    const defs = [
      { ...usersDefinition, version: "v1alpha1" },
      { ...usersDefinition, version: "v2beta1" },
      { ...usersDefinition, version: "v1" },
    ];
    const list = apiGroupList(defs) as Json;
    assert.deepEqual(
      list.groups[0].versions.map((v: Json) => v.version),
      ["v1", "v2beta1", "v1alpha1"],
    );
    assert.equal(list.groups[0].preferredVersion.version, "v1");
  });

  it("apiGroup() describes one group and is undefined for unknown or core groups", () => {
    const group = apiGroup(allDefinitions, "management.platform.sh") as Json;
    assert.equal(group.kind, "APIGroup");
    assert.equal(group.apiVersion, "v1");
    assert.equal(group.name, "management.platform.sh");
    assert.deepEqual(group.preferredVersion, { groupVersion: "management.platform.sh/v1", version: "v1" });
    assert.equal(apiGroup(allDefinitions, "nope.example.com"), undefined);
    assert.equal(apiGroup(allDefinitions, ""), undefined);
  });

  it("apiResourceList() lists main resources before subresources, with sorted verbs", () => {
    const list = apiResourceList(allDefinitions, "management.platform.sh", "v1") as Json;
    assert.equal(list.kind, "APIResourceList");
    assert.equal(list.groupVersion, "management.platform.sh/v1");
    assert.deepEqual(
      list.resources.map((r: Json) => r.name),
      [
        "configs",
        "selves",
        "users",
        "virtualclusterinstances",
        "virtualclusterinstances/kubeconfig",
        "virtualclusterinstances/status",
      ],
    );
    const users = list.resources.find((r: Json) => r.name === "users");
    assert.deepEqual(users, {
      name: "users",
      singularName: "user",
      namespaced: false,
      kind: "User",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      shortNames: ["usr"],
      categories: ["platform"],
    });
  });

  it("apiResourceList() describes the kubeconfig and status subresources as the contract says", () => {
    const list = apiResourceList(allDefinitions, "management.platform.sh", "v1") as Json;
    const byName = (name: string) => list.resources.find((r: Json) => r.name === name);
    assert.deepEqual(byName("virtualclusterinstances/kubeconfig"), {
      name: "virtualclusterinstances/kubeconfig",
      singularName: "",
      namespaced: true,
      kind: "VirtualClusterInstanceKubeConfig",
      verbs: ["create"],
    });
    assert.deepEqual(byName("virtualclusterinstances/status"), {
      name: "virtualclusterinstances/status",
      singularName: "",
      namespaced: true,
      kind: "VirtualClusterInstance",
      verbs: ["get", "patch", "update"],
    });
  });

  it("apiResourceList() gives create-only resources the create verb and honours restricted verbs", () => {
    const list = apiResourceList(allDefinitions, "management.platform.sh", "v1") as Json;
    assert.deepEqual(list.resources.find((r: Json) => r.name === "selves").verbs, ["create"]);
    assert.deepEqual(list.resources.find((r: Json) => r.name === "configs").verbs, [
      "create",
      "get",
      "patch",
      "update",
    ]);
  });

  it("apiResourceList() serves the core group as groupVersion v1 and is undefined for unknown versions", () => {
    const core = apiResourceList(allDefinitions, "", "v1") as Json;
    assert.equal(core.groupVersion, "v1");
    assert.deepEqual(
      core.resources.map((r: Json) => r.name),
      ["services", "services/status"],
    );
    assert.equal(apiResourceList(allDefinitions, "management.platform.sh", "v2"), undefined);
  });

  it("aggregatedDiscovery() builds an APIGroupDiscoveryList for /apis", () => {
    const doc = aggregatedDiscovery(allDefinitions, "apis") as Json;
    assert.equal(doc.kind, "APIGroupDiscoveryList");
    assert.equal(doc.apiVersion, "apidiscovery.k8s.io/v2");
    assert.equal(doc.items.length, 1);
    const [group] = doc.items;
    assert.deepEqual(group.metadata, { name: "management.platform.sh" });
    assert.equal(group.versions[0].version, "v1");
    assert.equal(group.versions[0].freshness, "Current");
    const users = group.versions[0].resources.find((r: Json) => r.resource === "users");
    assert.deepEqual(users, {
      resource: "users",
      responseKind: { group: "management.platform.sh", version: "v1", kind: "User" },
      scope: "Cluster",
      singularResource: "user",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      shortNames: ["usr"],
      categories: ["platform"],
    });
  });

  it("aggregatedDiscovery() nests subresources under their parent with responseKind and verbs", () => {
    const doc = aggregatedDiscovery(allDefinitions, "apis") as Json;
    const instances = doc.items[0].versions[0].resources.find((r: Json) => r.resource === "virtualclusterinstances");
    assert.equal(instances.scope, "Namespaced");
    assert.deepEqual(instances.subresources, [
      {
        subresource: "kubeconfig",
        responseKind: { group: "management.platform.sh", version: "v1", kind: "VirtualClusterInstanceKubeConfig" },
        verbs: ["create"],
      },
      {
        subresource: "status",
        responseKind: { group: "management.platform.sh", version: "v1", kind: "VirtualClusterInstance" },
        verbs: ["get", "patch", "update"],
      },
    ]);
  });

  it("aggregatedDiscovery() serves only the core group for /api", () => {
    const doc = aggregatedDiscovery(allDefinitions, "api") as Json;
    assert.equal(doc.items.length, 1);
    assert.deepEqual(doc.items[0].metadata, {});
    assert.deepEqual(
      doc.items[0].versions[0].resources.map((r: Json) => r.resource),
      ["services"],
    );
    assert.deepEqual(aggregatedDiscovery([usersDefinition], "api"), {
      kind: "APIGroupDiscoveryList",
      apiVersion: "apidiscovery.k8s.io/v2",
      metadata: {},
      items: [],
    });
  });

  it("aggregatedDiscovery() labels a v2beta1 answer with the v2beta1 apiVersion", () => {
    const doc = aggregatedDiscovery(allDefinitions, "apis", "v2beta1") as Json;
    assert.equal(doc.apiVersion, "apidiscovery.k8s.io/v2beta1");
    assert.equal(
      aggregatedDiscoveryContentType("v2beta1"),
      "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
    );
    assert.equal(aggregatedDiscoveryContentType("v2"), AGGREGATED_DISCOVERY_CONTENT_TYPE);
  });

  it("wantsAggregatedDiscovery() follows the order of the Accept header", () => {
    assert.equal(wantsAggregatedDiscovery(KUBECTL_ACCEPT), true);
    assert.equal(aggregatedDiscoveryVersion(KUBECTL_ACCEPT), "v2");
    assert.equal(
      aggregatedDiscoveryVersion(
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
      ),
      "v2beta1",
    );
    assert.equal(wantsAggregatedDiscovery("application/json"), false);
    assert.equal(
      wantsAggregatedDiscovery(
        "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
      ),
      false,
    );
    assert.equal(wantsAggregatedDiscovery("*/*"), false);
    assert.equal(wantsAggregatedDiscovery(undefined), false);
    assert.equal(wantsAggregatedDiscovery(""), false);
  });

  it("wantsAggregatedDiscovery() skips protobuf and unknown versions, honours q-values and parameter order", () => {
    assert.equal(
      aggregatedDiscoveryVersion(
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io",
      ),
      "v2",
    );
    assert.equal(
      wantsAggregatedDiscovery("application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList"),
      false,
    );
    assert.equal(
      wantsAggregatedDiscovery(
        "application/json;q=0.5, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
      ),
      true,
    );
    assert.equal(
      wantsAggregatedDiscovery(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0, application/json",
      ),
      false,
    );
  });
});
