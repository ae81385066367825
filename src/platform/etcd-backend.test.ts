import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createCertificateAuthority, issueCertificate } from "../pki/certificate-authority.ts";
import { WatchRecording } from "../storage/conformance-support.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../storage/etcd/testing-etcd-cluster.ts";
import { StorageError } from "../storage/types.ts";
import { openEtcdBackend } from "./etcd-backend.ts";

describe("openEtcdBackend() with mutual TLS", { skip: etcdMissing() }, () => {
  let dir: string;
  let cluster: EtcdCluster;
  const files = { ca: "", cert: "", key: "", otherCert: "", otherKey: "" };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "etcd-tls-"));
    const ca = await createCertificateAuthority({ commonName: "etcd-test-ca" });
    const server = await issueCertificate({
      ca,
      commonName: "etcd",
      ipAddresses: ["127.0.0.1"],
      usage: "peer",
      validitySeconds: 3600,
    });
    const client = await issueCertificate({ ca, commonName: "platform", usage: "client", validitySeconds: 3600 });
    const stranger = await issueCertificate({
      ca: await createCertificateAuthority({ commonName: "another-ca" }),
      commonName: "intruder",
      usage: "client",
      validitySeconds: 3600,
    });
    const write = async (name: string, text: string | undefined) => {
      const file = join(dir, name);
      await writeFile(file, text ?? "", { mode: 0o600 });
      return file;
    };
    files.ca = await write("ca.pem", ca.certPem);
    const serverCert = await write("server.pem", server.certPem);
    const serverKey = await write("server-key.pem", server.keyPem);
    files.cert = await write("client.pem", client.certPem);
    files.key = await write("client-key.pem", client.keyPem);
    files.otherCert = await write("other.pem", stranger.certPem);
    files.otherKey = await write("other-key.pem", stranger.keyPem);
    cluster = await startEtcdCluster({
      members: 1,
      tls: {
        certFile: serverCert,
        keyFile: serverKey,
        caFile: files.ca,
        client: { ca: ca.certPem, cert: client.certPem, key: client.keyPem ?? "" },
      },
    });
  });

  after(async () => {
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("openEtcdBackend() stores and watches over https with --etcd-cafile, --etcd-certfile and --etcd-keyfile", async () => {
    assert.match(cluster.endpoints[0], /^https:/);
    const store = await openEtcdBackend({
      kind: "etcd",
      endpoints: cluster.endpoints,
      caFile: files.ca,
      certFile: files.cert,
      keyFile: files.key,
      prefix: "/tls",
    });
    try {
      const watch = new WatchRecording(store, { prefix: "/k/", afterRevision: 0 });
      const created = await store.create("/k/a", "v");
      await watch.untilRevision(created.revision);
      assert.deepEqual(watch.events, [{ type: "create", record: created }]);
      assert.deepEqual(await store.get("/k/a"), created);
    } finally {
      await store.close();
    }
  });

  it("openEtcdBackend() fails naming etcd when the client certificate is not trusted", async () => {
    await assert.rejects(
      openEtcdBackend({
        kind: "etcd",
        endpoints: cluster.endpoints,
        caFile: files.ca,
        certFile: files.otherCert,
        keyFile: files.otherKey,
      }),
      (error: unknown) => error instanceof StorageError && /etcd is unavailable/.test(error.message),
    );
  });

  it("openEtcdBackend() names an unreadable file and refuses a certificate without its key", async () => {
    await assert.rejects(
      openEtcdBackend({ kind: "etcd", endpoints: cluster.endpoints, caFile: join(dir, "missing.pem") }),
      /--etcd-cafile .*missing\.pem cannot be read/,
    );
    await assert.rejects(
      openEtcdBackend({ kind: "etcd", endpoints: cluster.endpoints, certFile: files.cert }),
      /--etcd-certfile and --etcd-keyfile go together/,
    );
  });
});
