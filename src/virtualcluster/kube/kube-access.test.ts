import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { Agent as HttpAgent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startClusterApiServer } from "../../cluster-apiserver/cluster-api-server.ts";
import { directAccess, KubeconfigError, loadKubeAccess } from "./kube-access.ts";
import { KubeApiError } from "./kube-api-error.ts";
import { KubeHttp } from "./kube-http.ts";

let dir: string;
let server: Awaited<ReturnType<typeof startClusterApiServer>>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "vcp-kube-access-"));
  server = await startClusterApiServer({ dataDir: join(dir, "cluster"), host: "127.0.0.1", port: 0 });
});

after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A kubeconfig with one context; `cluster` and `user` are the YAML of its entries. */
function kubeconfig(cluster: string, user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "current-context: c",
    "contexts:",
    "- name: c",
    "  context: {cluster: k, user: u}",
    "- name: other",
    "  context: {cluster: nowhere, user: u}",
    "clusters:",
    "- name: nowhere",
    "  cluster: {server: 'https://127.0.0.1:1'}",
    "- name: k",
    `  cluster: ${cluster}`,
    "users:",
    "- name: u",
    `  user: ${user}`,
    "",
  ].join("\n");
}

const adminToken = async () => /token: (\S+)/.exec(await readFile(server.kubeconfigPath, "utf8"))?.[1] ?? "";

async function namespaces(access: Awaited<ReturnType<typeof loadKubeAccess>>): Promise<string[]> {
  const http = new KubeHttp(access);
  try {
    const list = await http.request<{ items: { metadata: { name: string } }[] }>({
      method: "GET",
      path: "/api/v1/namespaces",
    });
    return list.items.map((item) => item.metadata.name);
  } finally {
    http.close();
  }
}

test("loadKubeAccess() reads a token and a CA file relative to the kubeconfig, from the current context", async () => {
  await writeFile(join(dir, "ca.pem"), server.caPem);
  const file = join(dir, "token.kubeconfig");
  await writeFile(
    file,
    kubeconfig(`{server: '${server.url}', certificate-authority: ca.pem}`, `{token: ${await adminToken()}}`),
  );
  assert.ok((await namespaces(await loadKubeAccess({ file }))).includes("default"));
});

test("loadKubeAccess() reads a token file, and base64 CA data works as well as a file", async () => {
  const tokenFile = join(dir, "token");
  await writeFile(tokenFile, `${await adminToken()}\n`);
  const ca = Buffer.from(server.caPem).toString("base64");
  const file = join(dir, "token-file.kubeconfig");
  await writeFile(
    file,
    kubeconfig(`{server: '${server.url}', certificate-authority-data: ${ca}}`, `{tokenFile: ${tokenFile}}`),
  );
  assert.ok((await namespaces(await loadKubeAccess({ file }))).includes("kube-system"));
});

test("loadKubeAccess() sends no credential it was not given: the server answers 401 as a KubeApiError", async () => {
  const file = join(dir, "anonymous.kubeconfig");
  await writeFile(file, kubeconfig(`{server: '${server.url}', insecure-skip-tls-verify: true}`, "{}"));
  await assert.rejects(namespaces(await loadKubeAccess({ file })), (error) => {
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.code, 401);
    return true;
  });
});

test("loadKubeAccess() verifies the server against the kubeconfig's CA, not the system's roots", async () => {
  const file = join(dir, "no-ca.kubeconfig");
  await writeFile(file, kubeconfig(`{server: '${server.url}'}`, `{token: ${await adminToken()}}`));
  await assert.rejects(namespaces(await loadKubeAccess({ file })), (error) => {
    assert.ok(!(error instanceof KubeApiError), "a TLS failure, not an HTTP answer");
    assert.match(String((error as { code?: string }).code), /CERT|SELF_SIGNED|UNABLE/);
    return true;
  });
});

test("loadKubeAccess() hands an exec credential plugin to client-node, which runs it", async () => {
  const plugin = join(dir, "credential-plugin.sh");
  const token = await adminToken();
  await writeFile(
    plugin,
    `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
    { mode: 0o755 },
  );
  const ca = Buffer.from(server.caPem).toString("base64");
  const file = join(dir, "exec.kubeconfig");
  await writeFile(
    file,
    kubeconfig(
      `{server: '${server.url}', certificate-authority-data: ${ca}}`,
      `{exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never}}`,
    ),
  );
  assert.ok((await namespaces(await loadKubeAccess({ file }))).includes("default"));
});

test("loadKubeAccess() takes KUBECONFIG, and says what is missing when there is no kubeconfig at all", async () => {
  const file = join(dir, "token.kubeconfig");
  assert.equal((await loadKubeAccess({ env: { KUBECONFIG: file } })).server, server.url);
  await assert.rejects(loadKubeAccess({ env: { HOME: join(dir, "no-home") } }), (error) => {
    assert.ok(error instanceof KubeconfigError);
    assert.match(error.message, /no kubeconfig found/);
    return true;
  });
  await assert.rejects(loadKubeAccess({ file: join(dir, "missing.kubeconfig") }), /cannot read kubeconfig/);
  const empty = join(dir, "empty.kubeconfig");
  await writeFile(empty, "apiVersion: v1\nkind: Config\n");
  await assert.rejects(loadKubeAccess({ file: empty }), /has no current cluster/);
});

test("directAccess() refuses plain http unless TLS verification is explicitly off", () => {
  assert.throws(() => directAccess({ server: "http://127.0.0.1:8080" }), /plain http/);
  assert.equal(
    directAccess({ server: "http://127.0.0.1:8080/", tls: { insecure: true } }).server,
    "http://127.0.0.1:8080",
  );
});

test("loadKubeAccess() sends a kubeconfig's impersonation (as, as-groups) itself, without client-node", async () => {
  const file = join(dir, "impersonating.kubeconfig");
  await writeFile(
    file,
    kubeconfig(
      `{server: '${server.url}', insecure-skip-tls-verify: true}`,
      `{token: t, as: 'platform:user:alice', as-groups: ['platform:team:devs', 'platform:team:ops']}`,
    ),
  );
  const access = await loadKubeAccess({ file });
  const { headers } = await access.requestOptions();
  assert.equal((headers as Record<string, unknown>)["impersonate-user"], "platform:user:alice");
  assert.deepEqual((headers as Record<string, unknown>)["impersonate-group"], [
    "platform:team:devs",
    "platform:team:ops",
  ]);
  assert.equal((headers as Record<string, unknown>).authorization, "Bearer t");
  access.close();
});

test("directAccess() keys its connection pool by address only: no CA text built into a key per request", async () => {
  const access = directAccess({
    server: server.url,
    tls: { ca: server.caPem },
    credential: { kind: "token", token: await adminToken() },
  });
  const { agent } = await access.requestOptions();
  const url = new URL(server.url);
  const key = (agent as HttpAgent).getName({ host: url.hostname, port: Number(url.port) });
  assert.ok(!key.includes("BEGIN CERTIFICATE"), "the CA text is not part of the pool key");
  // The CA still decides whom the connection trusts.
  const http = new KubeHttp(access);
  try {
    const list = await http.request<{ items: unknown[] }>({ method: "GET", path: "/api/v1/namespaces" });
    assert.ok(list.items.length > 0);
  } finally {
    http.close();
  }
});
