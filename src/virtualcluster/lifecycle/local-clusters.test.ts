import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { LifecycleError } from "./lifecycle-error.ts";
import {
  checkName,
  clusterPaths,
  type LocalCluster,
  listLocalClusters,
  namespaceOf,
  readLocalCluster,
  removeLocalCluster,
  writeLocalCluster,
} from "./local-clusters.ts";

const root = mkdtempSync(join(tmpdir(), "vc-local-clusters-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshHome = () => join(root, `home-${n++}`);
const mode = (path: string) => statSync(path).mode & 0o777;

const cluster = (namespace: string, name: string): LocalCluster => ({
  name,
  namespace,
  created: "2026-01-01T00:00:00Z",
  listenHost: "127.0.0.1",
  port: 40000,
  hostServer: "https://127.0.0.1:6443",
});

describe("local clusters", () => {
  it("namespaceOf() finds the only namespace of a name, and asks for -n when there is none or several", () => {
    const home = freshHome();
    writeLocalCluster(cluster("team-a", "dev"), home);
    writeLocalCluster(cluster("team-a", "web"), home);
    writeLocalCluster(cluster("team-b", "web"), home);
    assert.equal(namespaceOf("dev", undefined, home), "team-a");
    assert.equal(namespaceOf("web", "team-b", home), "team-b");
    assert.throws(() => namespaceOf("web", undefined, home), /web is in namespaces team-a, team-b: pass -n NAMESPACE/);
    assert.throws(() => namespaceOf("nope", undefined, home), /nope not found on this machine .*pass -n NAMESPACE/);
  });

  it("checkName() accepts DNS labels and rejects everything a path or object name could be abused with", () => {
    for (const good of ["a", "dev", "team-a", "a1", "x".repeat(63)]) checkName("name", good);
    for (const bad of ["", "Dev", "-a", "a-", "a_b", "a.b", "../x", "a/b", "x".repeat(64)]) {
      assert.throws(() => checkName("virtual cluster name", bad), LifecycleError, bad);
    }
    fc.assert(
      fc.property(fc.string(), (value) => {
        try {
          checkName("name", value);
        } catch {
          return true;
        }
        return !value.includes("/") && !value.includes(".") && value === value.toLowerCase() && value.length <= 63;
      }),
    );
  });

  it("writeLocalCluster() keeps the state in a 0700 directory as a 0600 file; readLocalCluster() reads it back", () => {
    const home = freshHome();
    writeLocalCluster(cluster("team-a", "dev"), home);
    const paths = clusterPaths("team-a", "dev", home);
    assert.equal(mode(paths.dir), 0o700);
    assert.equal(mode(join(home, "clusters")), 0o700);
    assert.equal(mode(paths.state), 0o600);
    assert.deepEqual(readLocalCluster("team-a", "dev", home), cluster("team-a", "dev"));
    assert.equal(readLocalCluster("team-a", "other", home), undefined);
  });

  it("readLocalCluster() rejects a damaged state file with a line that says what to do", () => {
    const home = freshHome();
    const paths = clusterPaths("team-a", "dev", home);
    mkdirSync(paths.dir, { recursive: true });
    writeFileSync(paths.state, JSON.stringify({ ...cluster("team-b", "dev") }));
    assert.throws(
      () => readLocalCluster("team-a", "dev", home),
      /not a virtual cluster state file; remove .*virtualcluster delete dev -n team-a/,
    );
  });

  it("listLocalClusters() lists by namespace then name and skips damaged entries", () => {
    const home = freshHome();
    for (const [namespace, name] of [
      ["b", "z"],
      ["a", "y"],
      ["b", "a"],
    ])
      writeLocalCluster(cluster(namespace, name), home);
    mkdirSync(join(home, "clusters", "a", "broken"));
    writeFileSync(join(home, "clusters", "a", "broken", "cluster.json"), "{");
    assert.deepEqual(
      listLocalClusters(home).map((c) => `${c.namespace}/${c.name}`),
      ["a/y", "b/a", "b/z"],
    );
    assert.deepEqual(listLocalClusters(freshHome()), []);
  });

  it("removeLocalCluster() removes the directory and an emptied namespace directory", () => {
    const home = freshHome();
    writeLocalCluster(cluster("a", "x"), home);
    writeLocalCluster(cluster("b", "x"), home);
    writeLocalCluster(cluster("b", "y"), home);
    removeLocalCluster("a", "x", home);
    removeLocalCluster("b", "x", home);
    assert.deepEqual(
      listLocalClusters(home).map((c) => `${c.namespace}/${c.name}`),
      ["b/y"],
    );
    assert.throws(() => statSync(join(home, "clusters", "a")));
    statSync(join(home, "clusters", "b"));
  });
});
