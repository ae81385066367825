// A Vault KV secrets engine (version 2) for tests, written from Vault's published HTTP API documentation
// ("KV secrets engine - version 2 (API)", https://developer.hashicorp.com/vault/api-docs/secret/kv/kv-v2, and
// "Vault HTTP API" for headers, status codes and the error body). Vault itself cannot be installed here; the
// platform's client (src/secretstore/vault-kv.ts) is the code a real Vault sees. What it implements:
//   GET    /v1/<mount>/data/<path>[?version=N]   {data: {data, metadata: {created_time, custom_metadata,
//                                                 deletion_time, destroyed, version}}}; 404 for none / deleted
//   POST|PUT /v1/<mount>/data/<path>             {data, options: {cas}}: cas 0 = only if absent, N = only if the
//                                                 current version is N; else 400 "check-and-set parameter did not
//                                                 match the current version"; answers {data: {version, ...}}
//   DELETE /v1/<mount>/data/<path>               soft-deletes the latest version (204)
//   DELETE /v1/<mount>/metadata/<path>           every version and the metadata (204)
//   LIST   /v1/<mount>/metadata/<path>/  or GET ...?list=true   {data: {keys: [...]}}; 404 when empty
//   X-Vault-Token (403 "permission denied" without a valid token or outside its policy), X-Vault-Namespace (each
//   namespace has its own secrets and tokens), sealed (503 "Vault is sealed"), errors as {"errors": [...]}.
// Tokens carry a policy: the path prefixes (after the mount) they may read and write.

import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { testTls } from "./test-ca.ts";

interface Version {
  data: Record<string, unknown>;
  created_time: string;
  deletion_time: string;
  destroyed: boolean;
}

interface Entry {
  versions: Version[];
}

export interface VaultTokenPolicy {
  /** Namespace the token belongs to ("" = root). */
  namespace?: string;
  /** Path prefixes under the mount it may use (default: everything). */
  paths?: string[];
  /** Read only. */
  readOnly?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  token?: string;
  namespace?: string;
  vaultRequest?: string;
  body?: unknown;
}

export interface VaultTestServer {
  address: string;
  /** The CA of its certificate (https only). */
  caPem?: string;
  requests: RecordedRequest[];
  addToken(token: string, policy?: VaultTokenPolicy): void;
  sealed: boolean;
  /** The newest live version's data of a secret, as a Vault admin would read it, or undefined. */
  peek(namespace: string, path: string): { data: Record<string, unknown>; version: number } | undefined;
  /** A write by someone else (a Vault user), bypassing tokens. */
  put(namespace: string, path: string, data: Record<string, unknown>): number;
  close(): Promise<void>;
}

const now = () => new Date().toISOString();

export async function startVaultTestServer(options: { tls?: boolean; mount?: string } = {}): Promise<VaultTestServer> {
  const mount = options.mount ?? "secret";
  /** namespace -> path -> entry */
  const stores = new Map<string, Map<string, Entry>>();
  const tokens = new Map<string, VaultTokenPolicy>();
  const requests: RecordedRequest[] = [];
  const storeOf = (namespace: string) => {
    let store = stores.get(namespace);
    if (!store) {
      store = new Map();
      stores.set(namespace, store);
    }
    return store;
  };
  const live = (entry: Entry | undefined) => {
    const latest = entry?.versions.at(-1);
    return latest && !latest.destroyed && !latest.deletion_time ? latest : undefined;
  };
  const writeVersion = (namespace: string, path: string, data: Record<string, unknown>) => {
    const store = storeOf(namespace);
    const entry = store.get(path) ?? { versions: [] };
    entry.versions.push({ data, created_time: now(), deletion_time: "", destroyed: false });
    store.set(path, entry);
    return entry.versions.length;
  };

  const server = {
    address: "",
    caPem: undefined as string | undefined,
    requests,
    sealed: false,
    addToken(token: string, policy: VaultTokenPolicy = {}) {
      tokens.set(token, policy);
    },
    peek(namespace: string, path: string) {
      const entry = storeOf(namespace).get(path);
      const latest = live(entry);
      return latest && entry ? { data: latest.data, version: entry.versions.length } : undefined;
    },
    put(namespace: string, path: string, data: Record<string, unknown>) {
      return writeVersion(namespace, path, data);
    },
    close: async () => {},
  };

  const reply = (response: ServerResponse, status: number, body?: unknown) => {
    if (body === undefined) {
      response.writeHead(status).end();
      return;
    }
    const text = JSON.stringify(body);
    response.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    response.end(text);
  };
  const fail = (response: ServerResponse, status: number, ...errors: string[]) => reply(response, status, { errors });

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return fail(response, 400, "failed to parse JSON input");
    }
    const url = new URL(request.url ?? "/", "http://vault.invalid");
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const namespace = (header("x-vault-namespace") ?? "").replace(/^\/+|\/+$/g, "");
    const token = header("x-vault-token");
    requests.push({
      method: request.method ?? "",
      path: url.pathname,
      token,
      namespace: namespace || undefined,
      vaultRequest: header("x-vault-request"),
      body,
    });
    if (server.sealed) return fail(response, 503, "Vault is sealed");
    const policy = token === undefined ? undefined : tokens.get(token);
    const prefix = `/v1/${mount}/`;
    if (!url.pathname.startsWith(prefix)) return fail(response, 404, `no handler for route "${url.pathname}"`);
    const rest = decodeURIComponent(url.pathname.slice(prefix.length));
    const [kind, ...segments] = rest.split("/");
    const path = segments.filter(Boolean).join("/");
    const isList = request.method === "LIST" || (request.method === "GET" && url.searchParams.get("list") === "true");
    const writing = request.method === "POST" || request.method === "PUT" || request.method === "DELETE";
    const allowed =
      policy !== undefined &&
      (policy.namespace ?? "") === namespace &&
      (policy.paths ?? [""]).some((p) => path.startsWith(p)) &&
      !(writing && policy.readOnly);
    if (!allowed) return fail(response, 403, "1 error occurred:\n\t* permission denied\n\n");
    const store = storeOf(namespace);

    if (kind === "metadata" && isList) {
      const folder = path ? `${path}/` : "";
      const keys = new Set<string>();
      for (const [key, entry] of store) {
        if (!key.startsWith(folder) || entry.versions.length === 0) continue;
        const next = key.slice(folder.length);
        const slash = next.indexOf("/");
        keys.add(slash === -1 ? next : next.slice(0, slash + 1));
      }
      if (keys.size === 0) return fail(response, 404);
      return reply(response, 200, { data: { keys: [...keys].sort() } });
    }
    if (kind === "metadata" && request.method === "DELETE") {
      store.delete(path);
      return reply(response, 204);
    }
    if (kind !== "data" || !path) return fail(response, 404);
    const entry = store.get(path);
    if (request.method === "GET") {
      const wanted = url.searchParams.get("version");
      const index = wanted && wanted !== "0" ? Number(wanted) : (entry?.versions.length ?? 0);
      const version = entry?.versions[index - 1];
      if (!version || version.destroyed || version.deletion_time) {
        // Vault answers 404 with the metadata of a deleted version, and {"errors":[]} when there is none.
        return fail(response, 404);
      }
      return reply(response, 200, {
        request_id: crypto.randomUUID(),
        data: {
          data: version.data,
          metadata: {
            created_time: version.created_time,
            custom_metadata: null,
            deletion_time: "",
            destroyed: false,
            version: index,
          },
        },
      });
    }
    if (request.method === "POST" || request.method === "PUT") {
      const input = body as { data?: unknown; options?: { cas?: unknown } } | undefined;
      if (!input || typeof input.data !== "object" || input.data === null || Array.isArray(input.data)) {
        return fail(response, 400, "no data provided");
      }
      const cas = input.options?.cas;
      const current = entry?.versions.length ?? 0;
      if (cas !== undefined && Number(cas) !== current) {
        return fail(response, 400, "check-and-set parameter did not match the current version");
      }
      const version = writeVersion(namespace, path, input.data as Record<string, unknown>);
      return reply(response, 200, {
        data: { created_time: now(), custom_metadata: null, deletion_time: "", destroyed: false, version },
      });
    }
    if (request.method === "DELETE") {
      const latest = live(entry);
      if (latest) latest.deletion_time = now();
      return reply(response, 204);
    }
    return fail(response, 405);
  };

  const listener = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch(() => fail(response, 500, "internal error"));
  };
  let http: ReturnType<typeof createHttpServer>;
  if (options.tls) {
    const tls = await testTls("vault test server");
    server.caPem = tls.caPem;
    http = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, listener);
  } else {
    http = createHttpServer(listener);
  }
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  server.address = `${options.tls ? "https" : "http"}://127.0.0.1:${port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return server;
}
