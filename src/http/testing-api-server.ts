// Test support for the HTTP server's integration tests (api-server.test.ts, api-server-pipeline.test.ts): our real
// HTTPS API server — TLS with a client CA, bearer and client-certificate authentication, a plugin route, a
// passthrough route (/relay/..., standing in for what the platform relays to a connected cluster), the mount prefix,
// a logger and a completion hook — over a TEST DOUBLE OF THE REGISTRY (an in-memory ResourceStore), with helpers to
// call it and to watch.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import pino from "pino";
import { errors } from "../apimachinery/errors.ts";
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
import { StorageError } from "../storage/types.ts";
import { type RunningApiServer, startApiServer } from "./api-server.ts";
import type { PassthroughCall, PassthroughRoute } from "./passthrough.ts";
import { requestState } from "./request-state.ts";
import type { ServerLimits } from "./server-limits.ts";
import type { CompletedRequest, ReceivedRequest } from "./types.ts";

export const GROUP = "test.platform.sh";
export const USERS = `/apis/${GROUP}/v1/users`;
export const alice = {
  apiVersion: `${GROUP}/v1`,
  kind: "User",
  metadata: { name: "alice" },
  spec: { email: "alice@example.com" },
};

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

  /** Called when a GET of "slow" starts waiting, with the function that lets it go on. */
  private readonly hold: (release: () => void) => void;

  constructor(definition: ResourceDefinition, hold: (release: () => void) => void) {
    this.definition = definition;
    this.hold = hold;
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
    // The store closed under the read (the platform stopping past its grace period).
    if (ref.name === "closed") throw new StorageError("Closed", "storage is closed");
    if (ref.name === "slow") await new Promise<void>((resolve) => this.hold(resolve));
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
  // Users the authorizer allows (as testers) and flow control queues: fairness between them.
  "alice-token": { name: "alice", groups: ["testers"] },
  "carol-token": { name: "carol", groups: ["testers"] },
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
    const allowed = attributes.user.name === "admin" || attributes.user.groups.includes("testers");
    return allowed ? { allowed: true } : { allowed: false, reason: "no rule allows it" };
  },
};

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): Record<string, unknown>;
}

export interface CallOptions {
  /** Bearer token; default the admin's, null for none. */
  token?: string | null;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface TestWatch {
  /** Resolves when the response head arrives. */
  head: Promise<IncomingMessage>;
  lines: Record<string, unknown>[];
  nextLines(count: number): Promise<Record<string, unknown>[]>;
  ended(): Promise<void>;
  abort(): void;
}

export interface TestApiServer {
  server: RunningApiServer;
  /** The serving certificate, to trust. */
  ca: string;
  /** A client certificate the server's client CA signed. */
  clientCert: { cert: string; key: string };
  /** What the completion hook received. */
  completed: CompletedRequest[];
  /** What the RequestReceived hook received. */
  received: ReceivedRequest[];
  /** Times the bearer authenticator (the first one asked) was asked: once per authenticated request. */
  authentications: number;
  /** Requests a plugin route's handler ran for. */
  pluginHandled: number;
  /** The server's log. */
  logLines: string;
  /** The hooks' enabled(): while false, no hook hears of a request arriving (and it gets no Audit-Id). */
  hooksListen: boolean;
  /** Requests that reached fastify (counted by a plugin's onRequest hook): non-resource paths and plugin routes. */
  fastifyRequests: number;
  /** One entry per GET of "slow" waiting in the store, in arrival order; calling one lets that read go on. */
  slow: (() => void)[];
  /** Requests the passthrough route /relay/... answered (it answers 200 with the caller's name). */
  relayed: number;
  /** One entry per request of /relay/slow waiting in the route; calling one lets it answer. */
  relayHeld: (() => void)[];
  call(method: string, path: string, options?: CallOptions): Promise<TestResponse>;
  /** Opens a watch (as the admin) and collects its parsed lines. */
  openWatch(path: string, headers?: Record<string, string>): TestWatch;
  stop(): Promise<void>;
}

function call(api: TestApiServer, method: string, path: string, options: CallOptions): Promise<TestResponse> {
  const token = options.token === undefined ? "admin-token" : options.token;
  const headers: Record<string, string> = { ...options.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
  // node's client sends a DELETE body without Content-Length unless told.
  if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${api.server.url}${path}`, { method, headers, ca: api.ca }, (res) => {
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

export async function startTestApiServer(options: { limits?: Partial<ServerLimits> } = {}): Promise<TestApiServer> {
  const tmp = mkdtempSync(join(tmpdir(), "api-server-test-"));
  const file = (name: string) => join(tmp, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const serving = ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"];
  openssl("req", "-x509", ...newKey, "-keyout", file("key.pem"), "-out", file("cert.pem"), "-days", "1", ...serving);
  const ca = readFileSync(file("cert.pem"), "utf8");
  // A client CA and a client certificate it signed.
  const clientCa = ["-keyout", file("client-ca.key"), "-out", file("client-ca.pem"), "-subj", "/CN=client-ca"];
  openssl("req", "-x509", ...newKey, ...clientCa, "-days", "1");
  openssl(
    "req",
    "-new",
    ...newKey,
    "-keyout",
    file("client.key"),
    "-out",
    file("client.csr"),
    "-subj",
    "/CN=cert-admin",
  );
  const signer = ["-CA", file("client-ca.pem"), "-CAkey", file("client-ca.key"), "-CAcreateserial"];
  openssl("x509", "-req", "-in", file("client.csr"), ...signer, "-out", file("client.pem"), "-days", "1");
  const clientCert = { cert: readFileSync(file("client.pem"), "utf8"), key: readFileSync(file("client.key"), "utf8") };
  const api: TestApiServer = {
    server: undefined as unknown as RunningApiServer,
    ca,
    clientCert,
    completed: [],
    received: [],
    authentications: 0,
    pluginHandled: 0,
    logLines: "",
    hooksListen: true,
    fastifyRequests: 0,
    slow: [],
    relayed: 0,
    relayHeld: [],
    call: (method, path, options = {}) => call(api, method, path, options),
    openWatch: (path, headers = {}) => openWatch(api, path, headers),
    async stop() {
      await api.server?.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  const hold = (release: () => void) => {
    api.slow.push(release);
  };
  const logger = pino({ level: "info" }, { write: (line: string) => (api.logLines += line) });
  api.server = await startApiServer({
    resources: [
      new MemoryStore(usersDefinition, hold),
      new MemoryStore(widgetsDefinition, hold),
      new MemoryStore(selvesDefinition, hold),
    ],
    authenticators: [
      {
        authenticate(request) {
          api.authentications++;
          return bearer.authenticate(request);
        },
      },
      certificate,
    ],
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
          api.fastifyRequests++;
        });
        app.post("/login", async (request, reply) => {
          api.pluginHandled++;
          const state = requestState(request);
          return reply.code(200).send({ user: state?.user?.name, bytes: (request.body as Buffer).length });
        });
        app.get("/whoami", async (request) => {
          api.pluginHandled++;
          return { user: requestState(request)?.user?.name };
        });
      },
    ],
    host: "127.0.0.1",
    port: 0,
    pathPrefixes: ["/kubernetes/management"],
    version: { major: "1", minor: "32", gitVersion: "v1.32.0-platform" },
    healthChecks: { storage: () => {} },
    hooks: {
      enabled: () => api.hooksListen,
      onRequestReceived: (info) => api.received.push(info),
      onRequestComplete: (info) => api.completed.push(info),
    },
    logger,
    limits: options.limits,
    passthrough: [relayRoute(api)],
  });
  return api;
}

/** /relay/...: answers itself; `?watch=1` is long-running, /relay/slow waits for api.relayHeld. */
function relayRoute(api: TestApiServer): PassthroughRoute {
  return {
    matches: (url) => url.startsWith("/relay/"),
    longRunning: (_method, url) => new URL(url, "https://relay").searchParams.get("watch") === "1",
    async serve(call: PassthroughCall, response: ServerResponse) {
      if (call.url.startsWith("/relay/slow")) await new Promise<void>((resolve) => api.relayHeld.push(resolve));
      api.relayed++;
      const body = JSON.stringify({ user: call.user.name });
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
      return 200;
    },
  };
}

/** Opens a watch and yields parsed lines; `headers` resolves when the response head arrives. */
function openWatch(api: TestApiServer, path: string, headers: Record<string, string>): TestWatch {
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  let buffer = "";
  let res: IncomingMessage | undefined;
  const req = httpsRequest(`${api.server.url}${path}`, {
    headers: { authorization: "Bearer admin-token", ...headers },
    ca: api.ca,
  });
  const head = new Promise<IncomingMessage>((resolve, reject) => {
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

/**
 * Sends raw bytes over one TLS connection (ending the write side) and resolves with everything the server answered
 * until it closed: for requests no HTTP client would send.
 */
export function rawTlsExchange(options: {
  port: number;
  ca: string;
  servername: string;
  payload: string;
}): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = tlsConnect(
      { host: "127.0.0.1", port: options.port, ca: options.ca, servername: options.servername },
      () => {
        socket.end(options.payload);
      },
    );
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}
