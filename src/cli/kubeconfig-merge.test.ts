import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { buildKubeconfig } from "../pki/kubeconfig.ts";
import { CommandError } from "./command-error.ts";
import {
  currentContext,
  mergeKubeconfig,
  readKubeconfigFile,
  removeKubeconfigContext,
  targetKubeconfig,
  writeKubeconfigFile,
} from "./kubeconfig-merge.ts";

const root = mkdtempSync(join(tmpdir(), "vc-kubeconfig-merge-"));
after(() => rmSync(root, { recursive: true, force: true }));

const incoming = (name: string, server: string, userName?: string) =>
  buildKubeconfig({ name, server, user: { token: `token-of-${name}` }, userName });

const existing = stringify({
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "prod", cluster: { server: "https://prod" } }],
  users: [{ name: "me", user: { token: "mine" } }],
  contexts: [{ name: "prod", context: { cluster: "prod", user: "me", namespace: "web" } }],
  "current-context": "prod",
  preferences: { colors: true },
});

describe("kubeconfig merge", () => {
  it("removeKubeconfigContext() undoes mergeKubeconfig() and makes the previous context current again", () => {
    const merged = mergeKubeconfig(existing, incoming("vc_dev_default", "https://127.0.0.1:1234"), "f");
    assert.equal(currentContext(existing), "prod");
    const removed = removeKubeconfigContext(merged.text, "vc_dev_default", "prod", "f");
    assert.equal(removed.removed, true);
    assert.equal(removed.switchedTo, "prod");
    assert.deepEqual(parse(removed.text), parse(existing));
    // Another context current: left alone. The previous context gone: no current context.
    const elsewhere = stringify({ ...parse(merged.text), "current-context": "prod" });
    assert.equal(parse(removeKubeconfigContext(elsewhere, "vc_dev_default", "x", "f").text)["current-context"], "prod");
    const orphan = removeKubeconfigContext(merged.text, "vc_dev_default", "gone", "f");
    assert.equal(orphan.switchedTo, undefined);
    assert.equal(parse(orphan.text)["current-context"], undefined);
    assert.equal(removeKubeconfigContext(existing, "vc_dev_default", "prod", "f").removed, false);
  });

  it("mergeKubeconfig() adds the context, cluster and user, makes it current and keeps everything else", () => {
    const merged = mergeKubeconfig(existing, incoming("vc_dev_default", "https://127.0.0.1:1234"), "f");
    assert.equal(merged.context, "vc_dev_default");
    assert.equal(merged.server, "https://127.0.0.1:1234");
    const document = parse(merged.text);
    assert.equal(document["current-context"], "vc_dev_default");
    assert.deepEqual(document.preferences, { colors: true });
    assert.deepEqual(
      document.contexts.map((c: { name: string }) => c.name),
      ["prod", "vc_dev_default"],
    );
    assert.deepEqual(
      document.users.find((u: { name: string }) => u.name === "me"),
      { name: "me", user: { token: "mine" } },
    );
  });

  it("mergeKubeconfig() names the user after the context, so clusters with the same user name never clash", () => {
    const first = mergeKubeconfig("", incoming("vc_a_p", "https://a", "virtualcluster"), "f");
    const both = parse(mergeKubeconfig(first.text, incoming("vc_b_p", "https://b", "virtualcluster"), "f").text);
    assert.deepEqual(
      both.users.map((u: { name: string }) => u.name),
      ["vc_a_p", "vc_b_p"],
    );
    assert.equal(both.users[0].user.token, "token-of-vc_a_p");
    assert.equal(both.contexts[1].context.user, "vc_b_p");
  });

  it("mergeKubeconfig() replaces entries of the same name (connecting again) and is idempotent", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 6 }), (order) => {
        let text = existing;
        for (const name of order) text = mergeKubeconfig(text, incoming(name, `https://${name}`), "f").text;
        const document = parse(text);
        const names = document.contexts.map((c: { name: string }) => c.name);
        assert.equal(new Set(names).size, names.length, "no duplicates");
        assert.deepEqual(new Set(names), new Set(["prod", ...order]));
        assert.equal(document["current-context"], order.at(-1));
        assert.equal(mergeKubeconfig(text, incoming(order.at(-1)!, `https://${order.at(-1)}`), "f").text, text);
      }),
    );
  });

  it("mergeKubeconfig() refuses a file that is not a kubeconfig instead of overwriting it", () => {
    for (const bad of ["[1, 2]", "clusters: 5\n", "contexts:\n  - 1\n", "a: [\n"]) {
      assert.throws(
        () => mergeKubeconfig(bad, incoming("x", "https://x"), "/home/me/.kube/config"),
        (error) => {
          return error instanceof CommandError && error.message.startsWith("/home/me/.kube/config: ");
        },
      );
    }
    assert.throws(() => mergeKubeconfig("", "kind: Config\n", "f"), /no complete current context/);
  });

  it("targetKubeconfig() is --kubeconfig, else the first KUBECONFIG entry, else ~/.kube/config", () => {
    assert.equal(targetKubeconfig("/x", { KUBECONFIG: "/a:/b" }), "/x");
    assert.equal(targetKubeconfig(undefined, { KUBECONFIG: "/a:/b" }), "/a");
    assert.match(targetKubeconfig(undefined, {}), /\.kube[\\/]config$/);
  });

  it("writeKubeconfigFile() writes 0600 (also over a file others could read) and readKubeconfigFile() reads it", () => {
    const path = join(root, "sub", "config");
    assert.equal(readKubeconfigFile(path), "");
    writeKubeconfigFile(path, "a: 1\n");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(root, "sub")).mode & 0o777, 0o700);
    writeFileSync(path, "b: 2\n", { mode: 0o644 });
    writeKubeconfigFile(path, "c: 3\n");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, "utf8"), "c: 3\n");
  });
});
