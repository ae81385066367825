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
          { ...base, platform: { connected: true, instance: { namespace: "p-default", name: "dev" } } },
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
        "NAME   NAMESPACE   STATUS    URL                       PLATFORM                                         AGE",
        "dev    team-a      running   https://127.0.0.1:40000   connected (p-default/dev)                        5m",
        'web    team-a      running   https://127.0.0.1:40000   the access key lacks the role "virtualcluster"   5m',
        "solo   team-a      stopped   https://127.0.0.1:40000   -                                                5m",
        "",
      ].join("\n"),
    );
  });
});
