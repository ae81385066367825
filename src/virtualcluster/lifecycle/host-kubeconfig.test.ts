import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import fc from "fast-check";
import { stringify } from "yaml";
import { parseKubeconfig } from "../kube/kubeconfig-file.ts";
import { loadHostKubeconfig } from "./host-kubeconfig.ts";
import { LifecycleError } from "./lifecycle-error.ts";

const root = mkdtempSync(join(tmpdir(), "vc-host-kubeconfig-"));
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
    { name: "host", context: { cluster: "host", user: "admin", namespace: "team" } },
    { name: "other", context: { cluster: "other", user: "someone" } },
  ],
  "current-context": "host",
});

function write(path: string, text: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** Runs `work` with KUBECONFIG set (HOME too: no ~/.kube/config of the machine's may answer). */
function withKubeconfigEnv<T>(value: string | undefined, work: () => T): T {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
  process.env.HOME = join(root, "no-home");
  if (value === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = value;
  try {
    return work();
  } finally {
    for (const [name, saved_] of Object.entries(saved)) {
      if (saved_ === undefined) delete process.env[name];
      else process.env[name] = saved_;
    }
  }
}

describe("loadHostKubeconfig()", () => {
  it("loadHostKubeconfig() keeps only the current context, its cluster and user, with absolute paths", () => {
    const file = write(join(root, "two", "config"), twoContexts);
    const host = loadHostKubeconfig(file);
    assert.deepEqual(host.cluster, {
      name: "host",
      server: SERVER,
      caData: undefined,
      caFile: join(root, "two", "ca.crt"),
      insecure: false,
    });
    // What client-node reads from the copy (the runtime hands it exec plugins and the like).
    const copy = new KubeConfig();
    copy.loadFromString(host.text);
    assert.deepEqual(
      copy.getContexts().map((c) => [c.name, c.namespace]),
      [["host", "team"]],
    );
    assert.deepEqual(
      copy.getUsers().map((u) => u.token),
      ["host-token"],
    );
    assert.equal(copy.getCurrentCluster()?.server, SERVER);
    assert.equal(copy.getCurrentCluster()?.caFile, join(root, "two", "ca.crt"));
    // What kube-access reads from it, wherever the copy is kept.
    write(join(root, "two", "ca.crt"), "-----BEGIN CERTIFICATE-----\n");
    const parsed = parseKubeconfig(host.text, join(root, "elsewhere", "host.kubeconfig"));
    assert.equal(parsed.cluster?.server, SERVER);
    assert.equal(parsed.cluster?.ca?.toString(), "-----BEGIN CERTIFICATE-----\n");
    assert.equal(parsed.user?.token, "host-token");
  });

  it("loadHostKubeconfig() merges KUBECONFIG's files as kubectl does: the first to name an entry or the current context wins", () => {
    const first = write(
      join(root, "merge", "a", "config"),
      stringify({
        clusters: [{ name: "host", cluster: { server: SERVER, "certificate-authority": "a-ca.crt" } }],
        contexts: [{ name: "host", context: { cluster: "host", user: "admin" } }],
        "current-context": "host",
      }),
    );
    const second = write(
      join(root, "merge", "b", "config"),
      stringify({
        clusters: [{ name: "host", cluster: { server: "https://shadowed" } }],
        users: [
          {
            name: "admin",
            user: {
              "client-certificate": "certs/admin.crt",
              "client-key": "/abs/admin.key",
              exec: { apiVersion: "client.authentication.k8s.io/v1", command: "./bin/login", args: ["x"] },
            },
          },
        ],
        contexts: [{ name: "other", context: { cluster: "host", user: "admin" } }],
        "current-context": "other",
      }),
    );
    const missing = join(root, "merge", "missing");
    const host = withKubeconfigEnv([missing, first, second].join(delimiter), () => loadHostKubeconfig());
    assert.equal(host.source, "your kubeconfig");
    assert.equal(host.cluster.server, SERVER);
    assert.equal(host.cluster.caFile, join(root, "merge", "a", "a-ca.crt"));
    const document = JSON.parse(host.text);
    assert.equal(document["current-context"], "host");
    assert.deepEqual(document.users, [
      {
        name: "admin",
        user: {
          "client-certificate": join(root, "merge", "b", "certs", "admin.crt"),
          "client-key": "/abs/admin.key",
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: join(root, "merge", "b", "bin", "login"),
            args: ["x"],
          },
        },
      },
    ]);
  });

  it("loadHostKubeconfig() reads the copy of the host's context that earlier releases kept (client-node's export)", () => {
    const kept = write(
      join(root, "kept", "host.kubeconfig"),
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "c",
            cluster: {
              server: SERVER,
              "certificate-authority-data": "QUJD",
              "certificate-authority": "/abs/ca.crt",
              "insecure-skip-tls-verify": false,
              "tls-server-name": "h",
            },
          },
        ],
        users: [{ name: "u", user: { "client-certificate": "/c", "client-key": "/k", token: "t" } }],
        contexts: [{ name: "ctx", context: { name: "ctx", cluster: "c", user: "u", namespace: "ns" } }],
        preferences: {},
        "current-context": "ctx",
      }),
    );
    const host = loadHostKubeconfig(kept);
    assert.deepEqual(host.cluster, {
      name: "c",
      server: SERVER,
      caData: "QUJD",
      caFile: "/abs/ca.crt",
      insecure: false,
    });
    const document = JSON.parse(host.text);
    assert.equal(document.clusters[0].cluster["tls-server-name"], "h");
    assert.deepEqual(document.users[0].user, { "client-certificate": "/c", "client-key": "/k", token: "t" });
  });

  it("loadHostKubeconfig() leaves an exec plugin named without a path to PATH", () => {
    const file = write(
      join(root, "exec", "config"),
      stringify({
        clusters: [{ name: "c", cluster: { server: SERVER } }],
        users: [{ name: "u", user: { exec: { command: "kubelogin" } } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
        "current-context": "c",
      }),
    );
    assert.equal(JSON.parse(loadHostKubeconfig(file).text).users[0].user.exec.command, "kubelogin");
  });

  it("loadHostKubeconfig() says which file is missing or unusable", () => {
    assert.throws(() => loadHostKubeconfig(join(root, "none")), /--host-kubeconfig .*none: no such file/);
    const empty = write(join(root, "empty.kubeconfig"), "apiVersion: v1\nkind: Config\n");
    assert.throws(() => loadHostKubeconfig(empty), /empty\.kubeconfig has no current context with a cluster/);
    const list = write(join(root, "list.kubeconfig"), "- a\n- b\n");
    assert.throws(() => loadHostKubeconfig(list), /--host-kubeconfig .*list\.kubeconfig: not a kubeconfig/);
    const broken = write(join(root, "broken.kubeconfig"), "clusters: [\n");
    assert.throws(() => loadHostKubeconfig(broken), /--host-kubeconfig .*broken\.kubeconfig: not a kubeconfig/);
    assert.throws(
      () => withKubeconfigEnv(undefined, () => loadHostKubeconfig()),
      /no host cluster: pass --host-kubeconfig <file>/,
    );
    assert.throws(() => withKubeconfigEnv(broken, () => loadHostKubeconfig()), /cannot read your kubeconfig: /);
  });

  it("loadHostKubeconfig() answers any file with a kubeconfig or a LifecycleError (fast-check)", () => {
    const file = join(root, "arbitrary.kubeconfig");
    const entry = (field: string) =>
      fc.record({ name: fc.oneof(fc.constantFrom("a", "b"), fc.anything()), [field]: fc.anything() });
    const document = fc.oneof(
      fc.anything(),
      fc.record(
        {
          clusters: fc.oneof(fc.array(entry("cluster")), fc.anything()),
          users: fc.oneof(fc.array(entry("user")), fc.anything()),
          contexts: fc.oneof(fc.array(entry("context")), fc.anything()),
          "current-context": fc.oneof(fc.constantFrom("a", "b"), fc.anything()),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(document, (value) => {
        writeFileSync(file, JSON.stringify(value) ?? "");
        try {
          const host = loadHostKubeconfig(file);
          assert.equal(typeof host.cluster.server, "string");
          assert.equal(JSON.parse(host.text).contexts.length, 1);
        } catch (error) {
          assert.ok(error instanceof LifecycleError, String(error));
        }
      }),
      { numRuns: 300 },
    );
  });
});
