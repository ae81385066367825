// KubeHttp.request() over its own kept-alive connections (kept-alive-connections.ts) against the stand-alone cluster
// API server over real HTTPS: what https.request did for it still holds (the server's name checked against its
// certificate, impersonation headers sent whole, bodies, error answers and parallel requests).

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startClusterApiServer } from "../../cluster-apiserver/cluster-api-server.ts";
import { directAccess } from "./kube-access.ts";
import { KubeApiError } from "./kube-api-error.ts";
import { KubeHttp } from "./kube-http.ts";

let dir: string;
let server: Awaited<ReturnType<typeof startClusterApiServer>>;
let token: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "vcp-kube-http-"));
  server = await startClusterApiServer({ dataDir: join(dir, "cluster"), host: "127.0.0.1", port: 0 });
  token = /token: (\S+)/.exec(await readFile(server.kubeconfigPath, "utf8"))?.[1] ?? "";
});

after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const client = (options: Partial<Parameters<typeof directAccess>[0]> = {}) =>
  new KubeHttp(
    directAccess({
      server: server.url,
      tls: { ca: server.caPem },
      credential: { kind: "token", token },
      ...options,
    }),
  );

test("KubeHttp.request() writes, reads and refuses over its kept-alive connections", async () => {
  const http = client();
  try {
    await http.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: "kube-http" } } });
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http.request<{ metadata: { name: string } }>({
          method: "POST",
          path: "/api/v1/namespaces/kube-http/configmaps",
          body: { metadata: { name: `c${i}` }, data: { text: "é ✓ ".repeat(i * 100) } },
        }),
      ),
    );
    assert.deepEqual(
      created.map((object) => object.metadata.name),
      Array.from({ length: 20 }, (_, i) => `c${i}`),
    );
    const read = await http.request<{ data: { text: string } }>({
      method: "GET",
      path: "/api/v1/namespaces/kube-http/configmaps/c19",
    });
    assert.equal(read.data.text, "é ✓ ".repeat(1900));
    await assert.rejects(
      http.request({
        method: "POST",
        path: "/api/v1/namespaces/kube-http/configmaps",
        body: { metadata: { name: "c1" } },
      }),
      (error) => error instanceof KubeApiError && error.code === 409 && /already exists/.test(error.message),
    );
  } finally {
    http.close();
  }
});

test("KubeHttp.request() of a direct access goes over its own connections, reused from request to request", async () => {
  const access = directAccess({ server: server.url, tls: { ca: server.caPem }, credential: { kind: "token", token } });
  const connect = access.connect;
  assert.ok(connect, "a direct access makes its own connections");
  let opened = 0;
  const http = new KubeHttp({
    ...access,
    connect: () => {
      opened++;
      return connect();
    },
  });
  try {
    for (let i = 0; i < 5; i++) await http.request({ method: "GET", path: "/api/v1/namespaces/default" });
    assert.ok(opened >= 1, "requests went over the kept-alive connections, not https.request");
    assert.ok(opened < 5, `one connection carried several requests (${opened} opened for 5)`);
  } finally {
    http.close();
  }
});

test("KubeHttp.request() checks the server's name against its certificate", async () => {
  const http = client({ tls: { ca: server.caPem, servername: "not-the-server.example" } });
  try {
    await assert.rejects(http.request({ method: "GET", path: "/api/v1/namespaces" }), (error) => {
      assert.ok(!(error instanceof KubeApiError), "a TLS failure, not an HTTP answer");
      assert.equal((error as NodeJS.ErrnoException).code, "ERR_TLS_CERT_ALTNAME_INVALID");
      return true;
    });
  } finally {
    http.close();
  }
});

test("KubeHttp.request() sends impersonation whole: the server decides as the impersonated user", async () => {
  const http = client({ impersonate: { user: "someone", groups: ["team-a", "team-b"] } });
  try {
    await assert.rejects(http.request({ method: "GET", path: "/api/v1/namespaces" }), (error) => {
      assert.ok(error instanceof KubeApiError);
      assert.equal(error.code, 403);
      assert.match(error.message, /"someone"/);
      return true;
    });
  } finally {
    http.close();
  }
});
