// HTTPS integration test of the request pipeline. The store below is a TEST DOUBLE OF THE REGISTRY (an in-memory
// ResourceStore), so this exercises our real server end to end: TLS, routing, auth, codecs, watch framing.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { errors, successStatus } from "../apimachinery/errors.ts";
import type { KubeList, KubeObject } from "../apimachinery/types.ts";
import type { Authenticator } from "../auth/types.ts";
import type {
  ApiWatchEvent,
  Authorizer,
  DeleteResult,
  ListOptions,
  ObjectRef,
  RequestContext,
  ResourceDefinition,
  ResourceStore,
  WatchHandle,
  WatchOptions,
  WatchSink,
  WriteOptions,
} from "../registry/types.ts";
import { type RunningApiServer, startApiServer } from "./api-server.ts";
import { requestState } from "./request-state.ts";
import type { CompletedRequest } from "./types.ts";

const GROUP = "test.platform.sh";
const MAX = 3 * 1024 * 1024;

const usersDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "User",
  plural: "users",
  singular: "user",
  namespaced: false,
  description: "A user.",
  schema: { spec: { type: "object" } },
  strategy: {},
  statusSubresource: true,
  columns: [
    { name: "Email", type: "string", description: "E-mail.", cell: (u) => (u.spec as { email?: string })?.email },
  ],
  subresources: {
    kubeconfig: {
      kind: "UserKubeConfig",
      schema: {},
      description: "A kubeconfig.",
      verbs: ["create"],
      handle: async ({ parent }) => ({
        apiVersion: `${GROUP}/v1`,
        kind: "UserKubeConfig",
        metadata: {},
        status: { for: parent?.metadata.name },
      }),
    },
  },
};

const widgetsDefinition: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  singular: "widget",
  namespaced: true,
  description: "A core-group namespaced thing.",
  schema: {},
  strategy: {},
  verbs: ["get", "list", "watch", "create"],
};

const selvesDefinition: ResourceDefinition = {
  group: GROUP,
  version: "v1",
  kind: "Self",
  plural: "selves",
  singular: "self",
  namespaced: false,
  description: "Who am I.",
  schema: {},
  strategy: {},
  action: {
    kind: "Self",
    schema: {},
    description: "Who am I.",
    verbs: ["create"],
    handle: async ({ context, body }) => ({ ...(body as KubeObject), status: { user: context.user.name } }),
  },
};

/** TEST DOUBLE OF THE REGISTRY: an in-memory ResourceStore with just enough behaviour for the HTTP layer. */
class MemoryStore implements ResourceStore {
  readonly definition: ResourceDefinition;
  private readonly objects = new Map<string, KubeObject>();
  private readonly sinks = new Set<WatchSink>();
  private static revision = 1;

  constructor(definition: ResourceDefinition) {
    this.definition = definition;
  }

  private key(namespace: string | undefined, name: string): string {
    return `${namespace ?? ""}/${name}`;
  }

  private notFound(name: string) {
    return errors.notFound({ group: this.definition.group, resource: this.definition.plural }, name);
  }

  private emit(type: ApiWatchEvent["type"], object: KubeObject) {
    for (const sink of this.sinks) sink.send({ type, object });
  }

  async get(_context: RequestContext, ref: ObjectRef): Promise<KubeObject> {
    if (ref.name === "boom") throw new TypeError("cannot read secret-value-123 of undefined");
    const object = this.objects.get(this.key(ref.namespace, ref.name));
    if (!object) throw this.notFound(ref.name);
    return object;
  }

  async list(_context: RequestContext, options: ListOptions): Promise<KubeList> {
    const items = [...this.objects.values()].filter(
      (o) => !options.namespace || o.metadata.namespace === options.namespace,
    );
    return {
      apiVersion: this.apiVersion(),
      kind: `${this.definition.kind}List`,
      metadata: { resourceVersion: String(MemoryStore.revision) },
      items,
    };
  }

  async watch(_context: RequestContext, options: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    if (options.labelSelector === "!!") throw errors.badRequest("unable to parse requirement");
    if (!options.resourceVersion || options.resourceVersion === "0") {
      for (const object of this.objects.values()) sink.send({ type: "ADDED", object });
    }
    this.sinks.add(sink);
    return { resume: () => {}, close: () => this.sinks.delete(sink) };
  }

  private apiVersion() {
    return this.definition.group ? `${this.definition.group}/${this.definition.version}` : this.definition.version;
  }

  async create(
    context: RequestContext,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<KubeObject> {
    const object = structuredClone(body) as KubeObject;
    const name = object.metadata?.name ?? "";
    if (this.objects.has(this.key(namespace, name))) {
      throw errors.alreadyExists({ group: this.definition.group, resource: this.definition.plural }, name);
    }
    if (
      (object.spec as Record<string, unknown> | undefined)?.unknown !== undefined &&
      options.fieldValidation === "Warn"
    ) {
      context.warnings.push('unknown field "spec.unknown"');
    }
    object.apiVersion = this.apiVersion();
    object.kind = this.definition.kind;
    object.metadata = {
      ...object.metadata,
      ...(namespace ? { namespace } : {}),
      uid: `uid-${name}`,
      resourceVersion: String(++MemoryStore.revision),
      creationTimestamp: new Date(0).toISOString(),
    };
    if (!options.dryRun) {
      this.objects.set(this.key(namespace, name), object);
      this.emit("ADDED", object);
    }
    return object;
  }

  async update(context: RequestContext, ref: ObjectRef, body: unknown): Promise<KubeObject> {
    await this.get(context, ref);
    const object = { ...(body as KubeObject) };
    object.metadata = { ...object.metadata, resourceVersion: String(++MemoryStore.revision) };
    this.objects.set(this.key(ref.namespace, ref.name), object);
    this.emit("MODIFIED", object);
    return object;
  }

  async patch(context: RequestContext, ref: ObjectRef, _type: unknown, body: unknown) {
    const old = await this.get(context, ref);
    const object = {
      ...old,
      ...(body as object),
      metadata: { ...old.metadata, resourceVersion: String(++MemoryStore.revision) },
    };
    this.objects.set(this.key(ref.namespace, ref.name), object);
    this.emit("MODIFIED", object);
    return { object, created: false };
  }

  async delete(context: RequestContext, ref: ObjectRef): Promise<DeleteResult> {
    const object = await this.get(context, ref);
    if (object.metadata.finalizers?.length) {
      const pending = { ...object, metadata: { ...object.metadata, deletionTimestamp: new Date(0).toISOString() } };
      this.objects.set(this.key(ref.namespace, ref.name), pending);
      return { removed: false, object: pending };
    }
    this.objects.delete(this.key(ref.namespace, ref.name));
    this.emit("DELETED", object);
    return { removed: true, object };
  }

  async deleteCollection(context: RequestContext, options: ListOptions): Promise<KubeList> {
    const list = await this.list(context, options);
    this.objects.clear();
    return list;
  }
}

const users: { [token: string]: { name: string; groups: string[] } } = {
  "admin-token": { name: "admin", groups: ["system:masters"] },
  "bob-token": { name: "bob", groups: [] },
};

const bearer: Authenticator = {
  async authenticate({ headers }) {
    const header = headers.authorization;
    if (typeof header !== "string" || !header.startsWith("Bearer ")) return undefined;
    const user = users[header.slice(7)];
    if (!user) throw errors.unauthorized();
    return user;
  },
};

/** Recognizes any verified client certificate as the admin (the DER must be passed through). */
const certificate: Authenticator = {
  async authenticate({ clientCertificate }) {
    return clientCertificate && clientCertificate.length > 0 ? users["admin-token"] : undefined;
  },
};

const authorizer: Authorizer = {
  async authorize(attributes) {
    return attributes.user.name === "admin" ? { allowed: true } : { allowed: false, reason: "no rule allows it" };
  },
};

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): Record<string, unknown>;
}

let server: RunningApiServer;
let ca: string;
let tmp: string;
const completed: CompletedRequest[] = [];
let logLines = "";
/** The hooks' enabled(): while false, plain resource requests take the direct path (direct-request.ts), not fastify. */
let hooksListen = true;
/** Requests that reached fastify's pipeline (counted by a plugin's onRequest hook). */
let fastifyRequests = 0;
let clientCert: { cert: string; key: string };

function call(
  method: string,
  path: string,
  options: { token?: string | null; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Response> {
  const token = options.token === undefined ? "admin-token" : options.token;
  const headers: Record<string, string> = { ...options.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
  // node's client sends a DELETE body without Content-Length unless told.
  if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, { method, headers, ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Opens a watch and yields parsed lines; `headers` resolves when the response head arrives. */
function openWatch(path: string, headers: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  let buffer = "";
  let res: import("node:http").IncomingMessage | undefined;
  const req = httpsRequest(`${server.url}${path}`, {
    headers: { authorization: "Bearer admin-token", ...headers },
    ca,
  });
  const head = new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
    req.on("response", (response) => {
      res = response;
      resolve(response);
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        buffer += chunk;
        let newline = buffer.indexOf("\n");
        while (newline !== -1) {
          lines.push(JSON.parse(buffer.slice(0, newline)));
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf("\n");
        }
        for (const wake of waiters.splice(0)) wake();
      });
      response.on("end", () => {
        ended = true;
        for (const wake of waiters.splice(0)) wake();
      });
    });
    req.on("error", reject);
  });
  req.end();
  const until = async (predicate: () => boolean) => {
    while (!predicate()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return {
    head,
    lines,
    nextLines: async (count: number) => {
      await until(() => lines.length >= count || ended);
      return lines.slice(0, count);
    },
    ended: () => until(() => ended),
    abort: () => {
      res?.destroy();
      req.destroy();
    },
  };
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "api-server-test-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(tmp, "key.pem"),
      "-out",
      join(tmp, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  ca = readFileSync(join(tmp, "cert.pem"), "utf8");
  // A client CA and a client certificate it signed.
  const file = (name: string) => join(tmp, name);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      file("client-ca.key"),
      "-out",
      file("client-ca.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=client-ca",
    ],
    { stdio: "ignore" },
  );
  execFileSync(
    "openssl",
    [
      "req",
      "-new",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      file("client.key"),
      "-out",
      file("client.csr"),
      "-subj",
      "/CN=cert-admin",
    ],
    { stdio: "ignore" },
  );
  execFileSync(
    "openssl",
    [
      "x509",
      "-req",
      "-in",
      file("client.csr"),
      "-CA",
      file("client-ca.pem"),
      "-CAkey",
      file("client-ca.key"),
      "-CAcreateserial",
      "-out",
      file("client.pem"),
      "-days",
      "1",
    ],
    { stdio: "ignore" },
  );
  clientCert = { cert: readFileSync(file("client.pem"), "utf8"), key: readFileSync(file("client.key"), "utf8") };
  const { default: pino } = await import("pino");
  const logger = pino({ level: "info" }, { write: (line: string) => (logLines += line) });
  server = await startApiServer({
    resources: [
      new MemoryStore(usersDefinition),
      new MemoryStore(widgetsDefinition),
      new MemoryStore(selvesDefinition),
    ],
    authenticators: [bearer, certificate],
    authorizer,
    tls: {
      certPem: ca,
      keyPem: readFileSync(join(tmp, "key.pem"), "utf8"),
      clientCaPem: readFileSync(join(tmp, "client-ca.pem"), "utf8"),
    },
    publicPaths: ["/healthz", "/livez", "/readyz", "/version", "/login"],
    plugins: [
      (app) => {
        app.addHook("onRequest", async () => {
          fastifyRequests++;
        });
        app.post("/login", async (request, reply) => {
          const state = requestState(request);
          return reply.code(200).send({ user: state?.user?.name, bytes: (request.body as Buffer).length });
        });
        app.get("/whoami", async (request) => ({ user: requestState(request)?.user?.name }));
      },
    ],
    host: "127.0.0.1",
    port: 0,
    pathPrefixes: ["/kubernetes/management"],
    version: { major: "1", minor: "32", gitVersion: "v1.32.0-platform" },
    healthChecks: { storage: () => {} },
    hooks: { enabled: () => hooksListen, onRequestComplete: (info) => completed.push(info) },
    logger,
  });
});

after(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const USERS = `/apis/${GROUP}/v1/users`;
const alice = {
  apiVersion: `${GROUP}/v1`,
  kind: "User",
  metadata: { name: "alice" },
  spec: { email: "alice@example.com" },
};

// The direct read path must be invisible to clients: every read below is answered twice, once through fastify (a
// hook listens) and once directly (none does), and the two answers must be the same.
describe("startApiServer() direct reads", () => {
  const TABLE =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
  const reads: { path: string; token?: string | null; headers?: Record<string, string> }[] = [
    { path: `${USERS}/direct` },
    { path: `/kubernetes/management${USERS}/direct` },
    { path: `${USERS}/direct?pretty=true` },
    { path: `${USERS}/direct`, headers: { accept: "application/yaml" } },
    { path: `${USERS}/direct`, headers: { accept: TABLE } },
    { path: `${USERS}?labelSelector=team%3Dblue`, headers: { accept: TABLE } },
    { path: `${USERS}?limit=1` },
    { path: `${USERS}/direct/status` },
    { path: `/api/v1/namespaces/ns1/widgets/w1` },
    { path: `/api/v1/widgets` },
    { path: `${USERS}/missing` },
    { path: `${USERS}/direct`, token: "bob-token" },
    { path: `${USERS}/direct`, token: null },
    { path: `${USERS}/direct`, token: "wrong" },
    { path: `${USERS}/direct`, headers: { accept: "text/html" } },
    { path: `${USERS}?limit=abc` },
    { path: `${USERS}/direct/kubeconfig` },
    { path: `/api/v1/widgets/w1` },
  ];
  const answer = async (read: (typeof reads)[number], viaHooks: boolean) => {
    hooksListen = viaHooks;
    try {
      const before = { fastify: fastifyRequests, hooked: completed.length };
      const res = await call("GET", read.path, { token: read.token, headers: read.headers });
      const seen = {
        // The plugin's onRequest hook runs after authentication and authorization only.
        fastify: fastifyRequests > before.fastify,
        hooked: completed.length > before.hooked,
      };
      return {
        answer: {
          status: res.status,
          contentType: res.headers["content-type"],
          warning: res.headers.warning,
          text: res.text,
        },
        seen,
      };
    } finally {
      hooksListen = true;
    }
  };

  before(async () => {
    const carol = { ...alice, metadata: { name: "direct", labels: { team: "blue" } } };
    assert.equal((await call("POST", USERS, { body: JSON.stringify(carol) })).status, 201);
    const widget = { apiVersion: "v1", kind: "Widget", metadata: { name: "w1" } };
    assert.equal((await call("POST", "/api/v1/namespaces/ns1/widgets", { body: JSON.stringify(widget) })).status, 201);
  });

  after(async () => {
    assert.equal((await call("DELETE", `${USERS}/direct`)).status, 200);
  });

  it("startApiServer() answers a read the same way whether fastify or the direct path serves it", async () => {
    for (const read of reads) {
      const viaFastify = await answer(read, true);
      const direct = await answer(read, false);
      assert.equal(viaFastify.seen.hooked, true, read.path);
      assert.equal(direct.seen.fastify, false, read.path);
      assert.deepEqual(direct.answer, viaFastify.answer, `${read.path} ${read.token ?? ""}`);
    }
  });

  it("startApiServer() serves plain resource reads directly while no hook listens", async () => {
    for (const read of reads.slice(0, 8)) {
      assert.equal((await answer(read, false)).seen.fastify, false, read.path);
    }
  });

  it("startApiServer() leaves watches, bodies, other methods and non-resource paths to fastify", async () => {
    hooksListen = false;
    try {
      for (const [method, path, body] of [
        ["GET", `${USERS}?watch=true&timeoutSeconds=1`],
        ["GET", `${USERS}/direct`, "{}"],
        ["HEAD", `${USERS}/direct`],
        ["GET", "/version"],
        ["GET", `/apis/${GROUP}/v1`],
        ["GET", `/apis/${GROUP}/v1/nothings/x`],
      ] as const) {
        const before = fastifyRequests;
        const res = await call(method, path, { body });
        assert.ok(res.status < 500, `${method} ${path}: ${res.status}`);
        assert.equal(fastifyRequests, before + 1, `${method} ${path}`);
      }
    } finally {
      hooksListen = true;
    }
  });

  it("startApiServer() counts direct reads in /metrics and calls no hook for them", async () => {
    const count = async () => {
      const text = (await call("GET", "/metrics")).text;
      const match =
        /apiserver_request_total\{verb="GET",group="test.platform.sh",resource="users",subresource="",code="404"\} (\d+)/.exec(
          text,
        );
      return Number(match?.[1] ?? 0);
    };
    const before = await count();
    const hooked = completed.length;
    await answer({ path: `${USERS}/missing` }, false);
    assert.equal(await count(), before + 1);
    assert.equal(completed.length, hooked + 1, "only the /metrics read itself reached the hook");
  });
});

// The same for writes: each case runs after its setup on both paths. Only resourceVersions (the test store counts
// every write) may differ between the two answers.
describe("startApiServer() direct writes", () => {
  const dw = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...alice, metadata: { name: "dw", labels: { team: "blue" } }, ...extra });
  const yaml = `apiVersion: ${GROUP}/v1\nkind: User\nmetadata:\n  name: dw\nspec:\n  email: dw@example.com\n`;
  const exists = async (want: boolean) => {
    const present = (await call("GET", `${USERS}/dw`)).status === 200;
    if (present && !want) assert.equal((await call("DELETE", `${USERS}/dw`)).status, 200);
    if (!present && want) assert.equal((await call("POST", USERS, { body: dw() })).status, 201);
  };
  const absent = () => exists(false);
  /** A freshly created dw, the same before both answers. */
  const present = async () => {
    await exists(false);
    await exists(true);
  };
  interface Write {
    method: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    token?: string | null;
    setup?: () => Promise<void>;
  }
  const writes: Write[] = [
    { method: "POST", path: USERS, body: dw(), setup: absent },
    { method: "POST", path: `/kubernetes/management${USERS}`, body: dw(), setup: absent },
    { method: "POST", path: `${USERS}?pretty=true`, body: dw(), setup: absent },
    { method: "POST", path: USERS, body: dw(), headers: { accept: "application/yaml" }, setup: absent },
    { method: "POST", path: USERS, body: dw(), setup: present },
    { method: "POST", path: USERS, body: "{", setup: absent },
    { method: "POST", path: USERS, body: yaml, headers: { "content-type": "application/yaml" }, setup: absent },
    {
      method: "POST",
      path: USERS,
      body: dw(),
      headers: { "content-type": "application/json; charset=utf-8" },
      setup: absent,
    },
    { method: "POST", path: `${USERS}?fieldValidation=Warn`, body: dw({ spec: { unknown: 1 } }), setup: absent },
    { method: "POST", path: `${USERS}?dryRun=All`, body: dw(), setup: absent },
    { method: "POST", path: `${USERS}?dryRun=Sometimes`, body: dw(), setup: absent },
    { method: "POST", path: USERS, body: "hello", headers: { "content-type": "text/plain" }, setup: absent },
    { method: "POST", path: USERS, body: "", setup: absent },
    { method: "POST", path: USERS, setup: absent },
    { method: "POST", path: USERS, body: dw(), token: "bob-token", setup: absent },
    { method: "POST", path: USERS, body: dw(), token: null, setup: absent },
    { method: "POST", path: USERS, body: dw(), token: "wrong", setup: absent },
    { method: "POST", path: `${USERS}/dw/kubeconfig`, body: "{}", setup: present },
    { method: "POST", path: `/apis/${GROUP}/v1/selves`, body: "{}" },
    { method: "POST", path: "/api/v1/namespaces/ns1/widgets", body: '{"metadata":{"name":"w1"}}' },
    { method: "PUT", path: `${USERS}/dw`, body: dw(), setup: present },
    { method: "PUT", path: `${USERS}/missing`, body: dw({ metadata: { name: "missing" } }) },
    { method: "PUT", path: `${USERS}/dw`, body: dw(), setup: present, headers: { accept: "text/html" } },
    {
      method: "PATCH",
      path: `${USERS}/dw`,
      body: '{"metadata":{"labels":{"team":"red"}}}',
      headers: { "content-type": "application/merge-patch+json" },
      setup: present,
    },
    {
      method: "PATCH",
      path: `${USERS}/dw`,
      body: '{"metadata":{"labels":{"team":"red"}}}',
      headers: { "content-type": "application/strategic-merge-patch+json" },
      setup: present,
    },
    { method: "DELETE", path: `${USERS}/dw`, setup: present },
    {
      method: "DELETE",
      path: `${USERS}/dw`,
      body: '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}',
      setup: present,
    },
    { method: "DELETE", path: `${USERS}/missing` },
    { method: "DELETE", path: "/api/v1/namespaces/ns1/widgets/w1" },
    { method: "DELETE", path: "/api/v1/namespaces/ns1/widgets" },
  ];
  const normalized = (text: string) =>
    text.replace(/("resourceVersion":\s*")\d+"/g, '$1*"').replace(/(resourceVersion: )"?\d+"?/g, "$1*");
  const answer = async (write: Write, viaHooks: boolean) => {
    await write.setup?.();
    hooksListen = viaHooks;
    try {
      const before = { fastify: fastifyRequests, hooked: completed.length };
      const res = await call(write.method, write.path, {
        token: write.token,
        headers: write.headers,
        body: write.body,
      });
      return {
        answer: {
          status: res.status,
          contentType: res.headers["content-type"],
          warning: res.headers.warning,
          text: normalized(res.text),
        },
        seen: { fastify: fastifyRequests > before.fastify, hooked: completed.length > before.hooked },
      };
    } finally {
      hooksListen = true;
    }
  };

  before(async () => {
    const widget = { apiVersion: "v1", kind: "Widget", metadata: { name: "w1" } };
    const res = await call("POST", "/api/v1/namespaces/ns1/widgets", { body: JSON.stringify(widget) });
    assert.ok(res.status === 201 || res.status === 409, `widget: ${res.status}`);
  });

  after(absent);

  it("startApiServer() answers a write the same way whether fastify or the direct path serves it", async () => {
    for (const write of writes) {
      const label = `${write.method} ${write.path} ${write.headers?.["content-type"] ?? ""} ${write.token ?? ""}`;
      const viaFastify = await answer(write, true);
      const direct = await answer(write, false);
      assert.equal(viaFastify.seen.hooked, true, label);
      assert.equal(direct.seen.fastify, false, label);
      assert.deepEqual(direct.answer, viaFastify.answer, label);
    }
  });

  it("startApiServer() leaves streamed bodies and unusual Content-Types to fastify", async () => {
    await absent();
    const sent: [string, Record<string, string>][] = [
      ["chunked", { "content-type": "application/json", "transfer-encoding": "chunked" }],
      ["quoted parameter", { "content-type": 'application/json; charset="utf-8"' }],
      ["no Content-Type", {}],
    ];
    hooksListen = false;
    try {
      for (const [label, headers] of sent) {
        const before = fastifyRequests;
        const status = await new Promise<number>((resolve, reject) => {
          const req = httpsRequest(
            `${server.url}${USERS}?dryRun=All`,
            { method: "POST", headers: { authorization: "Bearer admin-token", ...headers }, ca },
            (res) => {
              res.resume();
              res.on("end", () => resolve(res.statusCode ?? 0));
            },
          );
          req.on("error", reject);
          if (!headers["transfer-encoding"]) req.setHeader("content-length", Buffer.byteLength(dw()));
          req.end(dw());
        });
        assert.ok(status < 500, `${label}: ${status}`);
        assert.equal(fastifyRequests, before + 1, label);
      }
    } finally {
      hooksListen = true;
    }
  });
});

describe("startApiServer()", () => {
  it("startApiServer() answers 401 Status without a token and with an unknown one", async () => {
    for (const token of [null, "wrong"]) {
      const res = await call("GET", USERS, { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json(), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401,
      });
    }
  });

  it("startApiServer() passes a verified client certificate to the authenticators", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${server.url}${USERS}`, { ca, ...clientCert }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 200);
  });

  it("startApiServer() runs plugin routes inside the pipeline, public or authenticated, also under the prefix", async () => {
    const login = await call("POST", "/kubernetes/management/login", { token: null, body: '{"password":"x"}' });
    assert.equal(login.status, 200);
    assert.deepEqual(login.json(), { user: "system:anonymous", bytes: 16 });
    assert.equal((await call("GET", "/whoami", { token: null })).status, 401);
    assert.equal((await call("GET", "/whoami", { token: "bob-token" })).status, 403);
    assert.deepEqual((await call("GET", "/whoami")).json(), { user: "admin" });
  });

  it("startApiServer() answers the authorizer's denial as an upstream-worded 403", async () => {
    const res = await call("GET", `${USERS}/alice`, { token: "bob-token" });
    assert.equal(res.status, 403);
    assert.equal(
      res.json().message,
      `users.${GROUP} "alice" is forbidden: User "bob" cannot get resource "users" in API group "${GROUP}" at the cluster scope: no rule allows it`,
    );
  });

  it("startApiServer() creates, reads, lists and deletes through the registry, also under the mount prefix", async () => {
    const created = await call("POST", USERS, { body: JSON.stringify(alice) });
    assert.equal(created.status, 201);
    assert.equal(created.headers["content-type"], "application/json");
    const got = await call("GET", `/kubernetes/management${USERS}/alice`);
    assert.equal(got.status, 200);
    assert.equal((got.json().metadata as { uid: string }).uid, "uid-alice");
    const list = await call("GET", `${USERS}?limit=500`);
    assert.equal(list.status, 200);
    assert.equal((list.json().items as unknown[]).length, 1);

    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "temp" } }) });
    const deleted = await call("DELETE", `${USERS}/temp`, {
      body: JSON.stringify({ kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", propagationPolicy: "Background" }),
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.json(), successStatus({ name: "temp", group: GROUP, kind: "users", uid: "uid-temp" }));
    assert.equal((await call("GET", `${USERS}/temp`)).status, 404);
  });

  it("startApiServer() answers a pending deletion with the object", async () => {
    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "fin", finalizers: ["x/y"] } }) });
    const res = await call("DELETE", `${USERS}/fin`);
    assert.equal(res.status, 200);
    assert.equal(res.json().kind, "User");
    assert.ok((res.json().metadata as { deletionTimestamp?: string }).deletionTimestamp);
  });

  it("startApiServer() answers 404 for unknown paths, groups and resources", async () => {
    for (const path of [
      "/nope",
      `/apis/${GROUP}/v2/users`,
      `/apis/${GROUP}/v1/nothings`,
      "/apis/other.io",
      "/api/v2",
    ]) {
      const res = await call("GET", path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json().message, "the server could not find the requested resource");
    }
    assert.equal((await call("GET", `/apis/${GROUP}/v1/namespaces/a/users`)).status, 404);
    assert.equal((await call("GET", "/api/v1/widgets/w")).status, 404);
  });

  it("startApiServer() answers 405 for verbs a resource does not serve", async () => {
    const res = await call("DELETE", "/api/v1/namespaces/a/widgets/w");
    assert.equal(res.status, 405);
    assert.equal(res.json().reason, "MethodNotAllowed");
    assert.equal(res.json().message, 'delete is not supported on resources of kind "widgets"');
    assert.equal((await call("GET", `/apis/${GROUP}/v1/selves`)).status, 405);
  });

  it("startApiServer() answers 500 InternalError to unexpected exceptions and logs them without request data", async () => {
    const res = await call("GET", `${USERS}/boom?token=query-secret`);
    assert.equal(res.status, 500);
    assert.equal(res.json().reason, "InternalError");
    assert.doesNotMatch(res.text, /secret-value-123/);
    assert.match(logLines, /internal error serving request/);
    assert.doesNotMatch(logLines, /query-secret|admin-token/);
  });

  it("startApiServer() answers HEAD like GET without a body", async () => {
    const res = await call("HEAD", `${USERS}/alice`);
    assert.equal(res.status, 200);
    assert.equal(res.text, "");
  });

  it("startApiServer() answers 406 for an Accept it cannot serve", async () => {
    const res = await call("GET", `${USERS}/alice`, { headers: { accept: "text/html" } });
    assert.equal(res.status, 406);
    assert.equal(res.json().reason, "NotAcceptable");
    assert.equal((await call("GET", `${USERS}/alice`, { headers: { accept: "*/*" } })).status, 200);
  });

  it("startApiServer() answers 413 above 3 MiB, declared or streamed", async () => {
    const limitBody = Buffer.alloc(MAX + 1, 32);
    const res = await call("POST", USERS, { body: limitBody });
    assert.equal(res.status, 413);
    assert.equal(res.json().message, "Request entity too large: limit is 3145728");
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${server.url}${USERS}`, {
        method: "POST",
        ca,
        headers: {
          authorization: "Bearer admin-token",
          "content-type": "application/json",
          "transfer-encoding": "chunked",
        },
      });
      req.on("response", (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on("error", (error) =>
        error.message.includes("EPIPE") || error.message.includes("ECONNRESET") ? undefined : reject(error),
      );
      req.write(limitBody.subarray(0, MAX));
      req.end(limitBody.subarray(MAX));
    });
    assert.equal(streamed, 413);
  });

  it("startApiServer() answers 415 to strategic merge patches", async () => {
    const res = await call("PATCH", `${USERS}/alice`, {
      body: "{}",
      headers: { "content-type": "application/strategic-merge-patch+json" },
    });
    assert.equal(res.status, 415);
    assert.equal(
      res.json().message,
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
    const merged = await call("PATCH", `${USERS}/alice`, {
      body: '{"spec":{"email":"a@b.c"}}',
      headers: { "content-type": "application/merge-patch+json" },
    });
    assert.equal(merged.status, 200);
  });

  it("startApiServer() answers 400 to malformed JSON and YAML and 422 to bad options", async () => {
    const json = await call("POST", USERS, { body: '{"metadata": ' });
    assert.equal(json.status, 400);
    assert.match(String(json.json().message), /not valid JSON/);
    const yaml = await call("POST", USERS, { body: "metadata: [\n", headers: { "content-type": "application/yaml" } });
    assert.equal(yaml.status, 400);
    assert.match(String(yaml.json().message), /not valid YAML at line/);
    const force = await call("PATCH", `${USERS}/alice?force=true`, {
      body: "{}",
      headers: { "content-type": "application/merge-patch+json" },
    });
    assert.equal(force.status, 422);
    assert.match(String(force.json().message), /force: Forbidden: may not be specified for non-apply patch/);
    assert.equal((await call("GET", `${USERS}?limit=x`)).status, 400);
    const badUrl = await call("GET", `${USERS}/%E0%A4%A`);
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.json().kind, "Status");
  });

  it("startApiServer() reads YAML bodies and answers YAML when asked", async () => {
    const created = await call("POST", USERS, {
      body: `apiVersion: ${GROUP}/v1\nkind: User\nmetadata:\n  name: yaml-user\n`,
      headers: { "content-type": "application/yaml", accept: "application/yaml" },
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers["content-type"], "application/yaml");
    assert.match(created.text, /^apiVersion: test.platform.sh\/v1\nkind: User\nmetadata:\n {2}name: yaml-user\n/);
  });

  it("startApiServer() answers Tables to kubectl get", async () => {
    const accept =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    const res = await call("GET", `${USERS}?limit=500`, { headers: { accept } });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/json;as=Table;v=v1;g=meta.k8s.io");
    const table = res.json() as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string } }[];
    };
    assert.equal(table.kind, "Table");
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ["Name", "Email", "Age"],
    );
    const row = table.rows.find((r) => r.cells[0] === "alice");
    assert.ok(row);
    assert.equal(row.object.kind, "PartialObjectMetadata");
    const one = await call("GET", `${USERS}/alice?includeObject=Object`, { headers: { accept } });
    assert.equal((one.json() as { rows: { object: { kind: string } }[] }).rows[0].object.kind, "User");
  });

  it("startApiServer() indents JSON with pretty=true", async () => {
    const res = await call("GET", `${USERS}/alice?pretty=true`);
    assert.match(res.text, /^\{\n {2}"apiVersion"/);
  });

  it("startApiServer() sends registry warnings as Warning headers", async () => {
    const res = await call("POST", USERS, {
      body: JSON.stringify({ ...alice, metadata: { name: "warned" }, spec: { unknown: 1 } }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, '299 - "unknown field \\"spec.unknown\\""');
  });

  it("startApiServer() serves create-only resources and create subresources with 201", async () => {
    const self = await call("POST", `/apis/${GROUP}/v1/selves`, {
      body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: "Self", metadata: {} }),
    });
    assert.equal(self.status, 201);
    assert.deepEqual(self.json().status, { user: "admin" });
    const kubeconfig = await call("POST", `${USERS}/alice/kubeconfig`, { body: "{}" });
    assert.equal(kubeconfig.status, 201);
    assert.deepEqual(kubeconfig.json().status, { for: "alice" });
    assert.equal((await call("POST", `${USERS}/ghost/kubeconfig`, { body: "{}" })).status, 404);
    assert.equal((await call("GET", `${USERS}/alice/kubeconfig`)).status, 405);
    assert.equal((await call("GET", `${USERS}/alice/status`)).status, 200);
    assert.equal((await call("GET", `${USERS}/alice/other`)).status, 404);
  });

  it("startApiServer() flushes watch headers before the first event and frames one event per line", async () => {
    const list = await call("GET", USERS);
    const rv = (list.json().metadata as { resourceVersion: string }).resourceVersion;
    const watch = openWatch(`${USERS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    // The head arrives although no event exists yet (kubectl wait/delete depend on it).
    const head = await watch.head;
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers["content-type"], "application/json");
    assert.equal(head.headers["transfer-encoding"], "chunked");
    assert.equal(watch.lines.length, 0);
    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "watched" } }) });
    const [event] = await watch.nextLines(1);
    assert.equal(event.type, "ADDED");
    assert.equal((event.object as KubeObject).metadata.name, "watched");
    watch.abort();
  });

  it("startApiServer() streams one-row Tables to kubectl get -w and ends at timeoutSeconds", async () => {
    const watch = openWatch(`${USERS}?watch=true&fieldSelector=metadata.name%3Dalice&timeoutSeconds=1`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    const [event] = await watch.nextLines(1);
    assert.equal(event.type, "ADDED");
    const table = event.object as { kind: string; rows: unknown[] };
    assert.equal(table.kind, "Table");
    assert.ok(table.rows.length >= 1);
    await watch.ended();
  });

  it("startApiServer() answers a watch the store refuses with a Status", async () => {
    const res = await call("GET", `${USERS}?watch=true&labelSelector=!!`);
    assert.equal(res.status, 400);
    assert.equal(res.json().reason, "BadRequest");
  });

  it("startApiServer() serves discovery, OpenAPI, version and health", async () => {
    const aggregated = await call("GET", "/apis", {
      headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json" },
    });
    assert.equal(
      aggregated.headers["content-type"],
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    );
    assert.equal(aggregated.json().kind, "APIGroupDiscoveryList");
    assert.equal((await call("GET", "/apis")).json().kind, "APIGroupList");
    assert.equal((await call("GET", `/apis/${GROUP}/v1`)).json().kind, "APIResourceList");
    assert.equal((await call("GET", "/api/v1")).json().kind, "APIResourceList");
    assert.equal((await call("GET", "/api")).json().kind, "APIVersions");
    assert.ok((((await call("GET", "/")).json().paths as string[]) ?? []).includes(`/apis/${GROUP}/v1`));

    const index = await call("GET", "/openapi/v3");
    const paths = index.json().paths as Record<string, { serverRelativeURL: string }>;
    const url = paths[`apis/${GROUP}/v1`].serverRelativeURL;
    const doc = await call("GET", url);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers["cache-control"], "public, immutable");
    const etag = String(doc.headers.etag);
    assert.equal((await call("GET", url, { headers: { "if-none-match": etag } })).status, 304);
    assert.equal((await call("GET", "/openapi/v2")).status, 200);
    assert.equal(
      (
        await call("GET", "/openapi/v2", {
          headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" },
        })
      ).status,
      406,
    );

    const version = await call("GET", "/version", { token: null });
    assert.deepEqual(version.json(), { major: "1", minor: "32", gitVersion: "v1.32.0-platform" });
    const healthz = await call("GET", "/healthz", { token: null });
    assert.equal(healthz.text, "ok");
    const verbose = await call("GET", "/readyz?verbose", { token: null });
    assert.equal(verbose.status, 200);
    assert.equal(verbose.text, "[+]ping ok\n[+]storage ok\n[+]shutdown ok\nreadyz check passed\n");
    assert.equal((await call("GET", "/kubernetes/management/livez", { token: null })).text, "ok");
    assert.equal((await call("GET", "/metrics", { token: null })).status, 401);
  });

  it("startApiServer() reports requests in /metrics and to the completion hook", async () => {
    const res = await call("GET", "/metrics");
    assert.equal(res.status, 200);
    assert.match(
      res.text,
      /apiserver_request_total\{verb="GET",group="test.platform.sh",resource="users",subresource="",code="200"\} \d+/,
    );
    assert.match(res.text, /apiserver_request_duration_seconds_bucket/);
    assert.match(res.text, /apiserver_longrunning_requests/);
    const denied = completed.find((c) => c.code === 403);
    assert.ok(denied);
    assert.equal(denied.user?.name, "bob");
    assert.equal(denied.reason, "Forbidden");
    assert.doesNotMatch(logLines, /admin-token|bob-token/);
  });

  it("startApiServer() answers malformed HTTP with a Status", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, ca, servername: "localhost" }, () => {
        socket.write("NOT-HTTP\r\n\r\n");
      });
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
      });
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    assert.match(answer, /^HTTP\/1.1 400 Bad Request\r\n/);
    assert.equal(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).kind, "Status");
  });

  it("startApiServer() close() ends open watches cleanly", async () => {
    const watch = openWatch(`${USERS}?watch=true&resourceVersion=999999`);
    await watch.head;
    await server.close();
    await watch.ended();
    assert.equal((await server.close()) ?? "closed", "closed");
  });
});
