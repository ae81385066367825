import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ApiException, KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { createdFor, createdLabels, currentContextOnly, hostErrorLine, loadHostKubeconfig } from "./host-cluster.ts";

const root = mkdtempSync(join(tmpdir(), "vc-host-cluster-"));
after(() => rmSync(root, { recursive: true, force: true }));
const SERVER = "https://10.0.0.1:6443";

const twoContexts = stringify({
  apiVersion: "v1",
  kind: "Config",
  clusters: [
    { name: "host", cluster: { server: SERVER, "certificate-authority": "ca.crt" } },
    { name: "other", cluster: { server: "https://other" } },
  ],
  users: [
    { name: "admin", user: { token: "host-token" } },
    { name: "someone", user: { token: "other-token" } },
  ],
  contexts: [
    { name: "host", context: { cluster: "host", user: "admin" } },
    { name: "other", context: { cluster: "other", user: "someone" } },
  ],
  "current-context": "host",
});

describe("host cluster", () => {
  it("hostErrorLine() gives the Status message, or says what failed on the network", () => {
    const status = JSON.stringify({ kind: "Status", message: 'namespaces "x" is forbidden: no', code: 403 });
    assert.equal(hostErrorLine(SERVER, new ApiException(403, "", status, {})), 'namespaces "x" is forbidden: no');
    assert.match(
      hostErrorLine(SERVER, new ApiException(401, "", "", {})),
      /rejected the kubeconfig's credentials \(401\)/,
    );
    assert.equal(
      hostErrorLine(SERVER, new ApiException(502, "", "<html>", {})),
      `the host cluster at ${SERVER} answered 502`,
    );
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    assert.equal(hostErrorLine(SERVER, refused), `cannot connect to the host cluster at ${SERVER}: connection refused`);
    const tls = new TypeError("fetch failed", {
      cause: Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
    });
    assert.match(hostErrorLine(SERVER, tls), /cannot verify the certificate of the host cluster at .*self-signed/);
  });

  it("currentContextOnly() keeps only the current context, its cluster and user, with absolute paths", () => {
    const file = join(root, "two.kubeconfig");
    writeFileSync(file, twoContexts);
    const copy = new KubeConfig();
    copy.loadFromString(currentContextOnly(loadHostKubeconfig(file)));
    assert.deepEqual(
      copy.getContexts().map((c) => c.name),
      ["host"],
    );
    assert.deepEqual(
      copy.getUsers().map((u) => u.token),
      ["host-token"],
    );
    assert.equal(copy.getCurrentCluster()?.server, SERVER);
    assert.equal(copy.getCurrentCluster()?.caFile, join(root, "ca.crt"));
  });

  it("loadHostKubeconfig() says which file is missing or unusable", () => {
    assert.throws(() => loadHostKubeconfig(join(root, "none")), /--host-kubeconfig .*none: no such file/);
    const empty = join(root, "empty.kubeconfig");
    writeFileSync(empty, "apiVersion: v1\nkind: Config\n");
    assert.throws(() => loadHostKubeconfig(empty), /has no current context with a cluster/);
  });

  it("createdFor() recognises only objects labelled for the same virtual cluster", () => {
    assert.equal(createdFor({ labels: createdLabels("dev") }, "dev"), true);
    assert.equal(createdFor({ labels: createdLabels("dev") }, "web"), false);
    assert.equal(createdFor({ labels: { "virtualcluster.platform.sh/virtualcluster": "dev" } }, "dev"), false);
    assert.equal(createdFor(undefined, "dev"), false);
  });
});
