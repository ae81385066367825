import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clusterTable, type ListedCluster } from "./list.ts";
import { renderTable } from "./output.ts";

const base: ListedCluster = {
  name: "dev",
  namespace: "team-a",
  status: "running",
  url: "https://127.0.0.1:40000",
  created: "2026-01-01T00:00:00Z",
  hostServer: "https://127.0.0.1:6443",
  kubeconfig: "/k",
  log: "/l",
};

describe("list", () => {
  it("clusterTable() shows status, URL, the platform connection or its error, and the age", () => {
    const now = Date.parse("2026-01-01T00:05:00Z");
    const text = renderTable(
      clusterTable(
        [
          {
            ...base,
            platform: { connected: true, instance: { namespace: "p-default", name: "dev" } },
            syncErrors: 0,
          },
          {
            ...base,
            name: "web",
            platform: { connected: false, error: 'the access key lacks the role "virtualcluster"' },
          },
          { ...base, name: "solo", status: "stopped" },
        ],
        now,
      ),
    );
    assert.equal(
      text,
      [
        "NAME   NAMESPACE   STATUS    URL                       PLATFORM                                         SYNC ERRORS   AGE",
        "dev    team-a      running   https://127.0.0.1:40000   connected (p-default/dev)                        0             5m",
        'web    team-a      running   https://127.0.0.1:40000   the access key lacks the role "virtualcluster"   -             5m',
        "solo   team-a      stopped   https://127.0.0.1:40000   -                                                -             5m",
        "",
      ].join("\n"),
    );
  });

  it("clusterTable() cuts long errors to the column, and -o wide shows them whole with the last sync error", () => {
    const now = Date.parse("2026-01-01T00:05:00Z");
    const error = `cannot connect to the platform 127.0.0.1:8443: ${"x".repeat(60)}`;
    const message = `patch sync.toHost.endpoints.patches[0].expression failed: ReferenceError: require is not defined`;
    const cluster: ListedCluster = {
      ...base,
      platform: { connected: false, error },
      syncErrors: 2,
      lastSyncError: { object: "endpoints/default/db", message, time: "2026-01-01T00:04:00Z" },
    };
    const table = renderTable(clusterTable([cluster], now));
    assert.ok(table.includes(`${error.slice(0, 49)}…`), table);
    assert.ok(!table.includes(error));
    assert.ok(!table.includes("require is not defined"), "no last error without -o wide");
    assert.match(table.split("\n")[1], /…\s+2\s+5m$/);
    const wide = renderTable(clusterTable([cluster], now, true), { wide: true });
    assert.match(wide.split("\n")[0], /SYNC ERRORS\s+AGE\s+LAST SYNC ERROR$/);
    assert.ok(wide.includes(error));
    assert.ok(wide.trimEnd().endsWith(`endpoints/default/db: ${message}`), wide);
  });
});
