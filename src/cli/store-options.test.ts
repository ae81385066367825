import assert from "node:assert/strict";
import { test } from "node:test";
import { etcdEndpoints, storeSelection } from "./store-options.ts";

test("storeSelection() is SQLite by default and etcd with its endpoints, TLS files and prefix", () => {
  assert.equal(storeSelection({}), undefined);
  assert.equal(storeSelection({ store: "sqlite" }), undefined);
  assert.deepEqual(
    storeSelection({
      store: "etcd",
      etcdEndpoints: ["https://10.0.0.1:2379"],
      etcdCafile: "ca.pem",
      etcdCertfile: "c.pem",
      etcdKeyfile: "k.pem",
      etcdPrefix: "/p",
    }),
    {
      kind: "etcd",
      endpoints: ["https://10.0.0.1:2379"],
      caFile: "ca.pem",
      certFile: "c.pem",
      keyFile: "k.pem",
      prefix: "/p",
    },
  );
});

test("storeSelection() refuses flags that do not fit together, saying which", () => {
  assert.throws(() => storeSelection({ store: "etcd" }), /--store etcd needs --etcd-endpoints/);
  assert.throws(() => storeSelection({ etcdEndpoints: ["http://a:2379"] }), /--etcd-endpoints needs --store etcd/);
  assert.throws(
    () => storeSelection({ store: "etcd", etcdEndpoints: ["http://a:2379"], etcdCertfile: "c.pem" }),
    /--etcd-certfile and --etcd-keyfile go together/,
  );
});

test("etcdEndpoints() parses a comma-separated list of http(s) URLs", () => {
  assert.deepEqual(etcdEndpoints("http://a:2379, https://b:2379,"), ["http://a:2379", "https://b:2379"]);
  assert.throws(() => etcdEndpoints("a:2379"), /not an http/);
  assert.throws(() => etcdEndpoints("nope"), /not a URL/);
  assert.throws(() => etcdEndpoints(","), /at least one URL/);
});
