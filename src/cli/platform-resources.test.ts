import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CommandError } from "./command-error.ts";
import { type DiscoveredResource, findResource, platformResources } from "./platform-resources.ts";

const ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/** The platform's APIResourceList as discovery sorts it (by plural), subresources last. */
const DISCOVERED: DiscoveredResource[] = [
  { name: "configs", singularName: "config", namespaced: false, kind: "Config", verbs: ALL },
  {
    name: "directclusterendpointtokens",
    singularName: "directclusterendpointtoken",
    namespaced: false,
    kind: "DirectClusterEndpointToken",
    verbs: ["create"],
  },
  { name: "ownedaccesskeys", singularName: "ownedaccesskey", namespaced: false, kind: "OwnedAccessKey", verbs: ALL },
  { name: "projects", singularName: "project", namespaced: false, kind: "Project", verbs: ALL },
  { name: "selves", singularName: "self", namespaced: false, kind: "Self", verbs: ["create"] },
  { name: "teams", singularName: "team", namespaced: false, kind: "Team", verbs: ALL },
  { name: "users", singularName: "user", shortNames: ["usr"], namespaced: false, kind: "User", verbs: ALL },
  {
    name: "virtualclusterinstances",
    singularName: "virtualclusterinstance",
    shortNames: ["vci"],
    namespaced: true,
    kind: "VirtualClusterInstance",
    verbs: ALL,
  },
  { name: "users/accesskeys", singularName: "", namespaced: false, kind: "UserAccessKeys", verbs: ["get", "list"] },
];

const resources = platformResources(DISCOVERED);
const pluralOf = (word: string) => findResource(resources, word).plural;

describe("platform resources", () => {
  it("platformResources() offers what can be listed, the common resources first in their usual order", () => {
    assert.deepEqual(
      resources.map((r) => r.name),
      ["users", "teams", "projects", "accesskeys", "virtualclusters", "configs"],
    );
    assert.deepEqual(
      resources.map((r) => [r.plural, r.namespaced]),
      [
        ["users", false],
        ["teams", false],
        ["projects", false],
        ["ownedaccesskeys", false],
        ["virtualclusterinstances", true],
        ["configs", false],
      ],
    );
  });

  it("findResource() takes the plural, the singular, short names and the kind, in any case", () => {
    for (const word of ["users", "user", "usr", "User", "USERS"]) assert.equal(pluralOf(word), "users");
    for (const word of ["ownedaccesskeys", "ownedaccesskey", "OwnedAccessKey"]) {
      assert.equal(pluralOf(word), "ownedaccesskeys");
    }
    assert.equal(pluralOf("config"), "configs");
  });

  it("findResource() keeps the friendly words: accesskey(s), virtualcluster(s), vc, vci", () => {
    for (const word of ["accesskeys", "accesskey"]) assert.equal(pluralOf(word), "ownedaccesskeys");
    for (const word of ["virtualclusters", "virtualcluster", "vc", "vci", "virtualclusterinstance"]) {
      assert.equal(pluralOf(word), "virtualclusterinstances");
    }
  });

  it("findResource() prefers a plural to another resource's short name", () => {
    const clash = platformResources([
      { name: "teams", singularName: "team", shortNames: ["users"], namespaced: false, kind: "Team", verbs: ALL },
      { name: "users", singularName: "user", namespaced: false, kind: "User", verbs: ALL },
    ]);
    assert.equal(findResource(clash, "users").plural, "users");
  });

  it("findResource() of an unknown word, a subresource or an unlisted resource is one line with the choices", () => {
    for (const word of ["bogus", "selves", "users/accesskeys", "directclusterendpointtokens", ""]) {
      assert.throws(
        () => findResource(resources, word),
        (error: CommandError) =>
          error instanceof CommandError &&
          error.lines.length === 1 &&
          error.message ===
            `unknown resource "${word}": use one of users, teams, projects, accesskeys, virtualclusters, configs`,
      );
    }
  });
});
