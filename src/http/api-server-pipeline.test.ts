// The resource pipeline over HTTPS (src/http/testing-api-server.ts: our real server over a TEST DOUBLE OF THE
// REGISTRY): every read and write case below is answered the same with and without a listening audit hook, and
// none reaches fastify.

import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { after, before, describe, it } from "node:test";
import { alice, type CallOptions, GROUP, startTestApiServer, type TestApiServer, USERS } from "./testing-api-server.ts";

let api: TestApiServer;
const call = (method: string, path: string, options?: CallOptions) => api.call(method, path, options);

before(async () => {
  api = await startTestApiServer();
});

after(async () => {
  await api?.stop();
});

// Every resource request takes the one pipeline, whether an audit hook listens or not: each case below is sent both
// ways and must get its expected answer both times (with an Audit-Id only while a hook listens), and none of them
// may reach fastify. The expected answers are those the fastify path gave before the two paths were merged.
const JSON_TYPE = "application/json";
const TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io";
const EPOCH = "1970-01-01T00:00:00.000Z";

interface Expected {
  status: number;
  contentType?: string;
  warning?: string;
  /** The body (resourceVersions as "*"): exact text, or the JSON value it must equal. */
  body?: string | object;
  /** Checks of the body's relevant fields instead. */
  check?: (text: string) => void;
}

interface Case {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  token?: string | null;
  setup?: () => Promise<void>;
  expect: Expected;
}

/** A Failure Status as the catalogue words it. */
const failure = (code: number, reason: string, message: string, details?: object) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  code,
  ...(details ? { details } : {}),
});
const unauthorized = { status: 401, body: failure(401, "Unauthorized", "Unauthorized") };
const notAcceptable = {
  status: 406,
  body: failure(
    406,
    "NotAcceptable",
    "only the following media types are accepted: application/json, application/yaml",
  ),
};
const normalized = (text: string) =>
  text.replace(/("resourceVersion":\s*")\d+"/g, '$1*"').replace(/(resourceVersion: )"?\d+"?/g, "$1*");

/** Sends the case with hooks listening and without; both answers must be the expected one. */
async function expectBothWays(c: Case): Promise<void> {
  const label = `${c.method} ${c.path} ${c.headers?.["content-type"] ?? ""} ${c.token ?? ""}`;
  for (const listening of [true, false]) {
    await c.setup?.();
    api.hooksListen = listening;
    try {
      const before = { fastify: api.fastifyRequests, hooked: api.completed.length };
      const res = await call(c.method, c.path, { token: c.token, headers: c.headers, body: c.body });
      const how = `${label} (hooks ${listening ? "listening" : "off"})`;
      assert.equal(api.fastifyRequests, before.fastify, `${how}: reached fastify`);
      assert.equal(api.completed.length > before.hooked, listening, `${how}: completion hook`);
      assert.equal(typeof res.headers["audit-id"] === "string", listening, `${how}: Audit-Id`);
      assert.equal(res.status, c.expect.status, `${how}: ${res.text}`);
      assert.equal(res.headers["content-type"], c.expect.contentType ?? JSON_TYPE, how);
      assert.equal(res.headers.warning, c.expect.warning, how);
      const text = normalized(res.text);
      if (typeof c.expect.body === "string") assert.equal(text, c.expect.body, how);
      else if (c.expect.body) assert.deepEqual(JSON.parse(text), c.expect.body, how);
      c.expect.check?.(text);
    } finally {
      api.hooksListen = true;
    }
  }
}

describe("startApiServer() pipeline reads", () => {
  const TABLE = `${TABLE_TYPE},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;
  const direct = {
    apiVersion: `${GROUP}/v1`,
    kind: "User",
    metadata: {
      name: "direct",
      labels: { team: "blue" },
      uid: "uid-direct",
      resourceVersion: "*",
      creationTimestamp: EPOCH,
    },
    spec: { email: "alice@example.com" },
  };
  const widget = {
    apiVersion: "v1",
    kind: "Widget",
    metadata: { name: "w1", namespace: "ns1", uid: "uid-w1", resourceVersion: "*", creationTimestamp: EPOCH },
  };
  /** One Table row for "direct", its object as PartialObjectMetadata. */
  const directRow = (text: string) => {
    const table = JSON.parse(text) as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string; metadata: { name: string } } }[];
    };
    assert.equal(table.kind, "Table");
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ["Name", "Email", "Age"],
    );
    assert.equal(table.rows.length, 1);
    assert.deepEqual(table.rows[0].cells.slice(0, 2), ["direct", "alice@example.com"]);
    assert.equal(table.rows[0].object.kind, "PartialObjectMetadata");
    assert.equal(table.rows[0].object.metadata.name, "direct");
  };
  const reads: Case[] = [
    { method: "GET", path: `${USERS}/direct`, expect: { status: 200, body: direct } },
    { method: "GET", path: `/kubernetes/management${USERS}/direct`, expect: { status: 200, body: direct } },
    {
      method: "GET",
      path: `${USERS}/direct?pretty=true`,
      expect: { status: 200, body: `${JSON.stringify(direct, null, 2)}\n` },
    },
    {
      method: "GET",
      path: `${USERS}/direct`,
      headers: { accept: "application/yaml" },
      expect: {
        status: 200,
        contentType: "application/yaml",
        body: `apiVersion: ${GROUP}/v1\nkind: User\nmetadata:\n  name: direct\n  labels:\n    team: blue\n  uid: uid-direct\n  resourceVersion: *\n  creationTimestamp: ${EPOCH}\nspec:\n  email: alice@example.com\n`,
      },
    },
    {
      method: "GET",
      path: `${USERS}/direct`,
      headers: { accept: TABLE },
      expect: { status: 200, contentType: TABLE_TYPE, check: directRow },
    },
    {
      method: "GET",
      path: `${USERS}?labelSelector=team%3Dblue`,
      headers: { accept: TABLE },
      expect: { status: 200, contentType: TABLE_TYPE, check: directRow },
    },
    {
      method: "GET",
      path: `${USERS}?limit=1`,
      expect: {
        status: 200,
        body: { apiVersion: `${GROUP}/v1`, kind: "UserList", metadata: { resourceVersion: "*" }, items: [direct] },
      },
    },
    { method: "GET", path: `${USERS}/direct/status`, expect: { status: 200, body: direct } },
    { method: "GET", path: "/api/v1/namespaces/ns1/widgets/w1", expect: { status: 200, body: widget } },
    {
      method: "GET",
      path: "/api/v1/widgets",
      expect: {
        status: 200,
        body: { apiVersion: "v1", kind: "WidgetList", metadata: { resourceVersion: "*" }, items: [widget] },
      },
    },
    {
      method: "GET",
      path: `${USERS}/missing`,
      expect: {
        status: 404,
        body: failure(404, "NotFound", `users.${GROUP} "missing" not found`, {
          group: GROUP,
          kind: "users",
          name: "missing",
        }),
      },
    },
    {
      method: "GET",
      path: `${USERS}/direct`,
      token: "bob-token",
      expect: {
        status: 403,
        body: failure(
          403,
          "Forbidden",
          `users.${GROUP} "direct" is forbidden: User "bob" cannot get resource "users" in API group "${GROUP}" at the cluster scope: no rule allows it`,
          { group: GROUP, kind: "users", name: "direct" },
        ),
      },
    },
    { method: "GET", path: `${USERS}/direct`, token: null, expect: unauthorized },
    { method: "GET", path: `${USERS}/direct`, token: "wrong", expect: unauthorized },
    { method: "GET", path: `${USERS}/direct`, headers: { accept: "text/html" }, expect: notAcceptable },
    {
      method: "GET",
      path: `${USERS}?limit=abc`,
      expect: {
        status: 400,
        body: failure(400, "BadRequest", 'invalid integer value for query parameter limit: "abc"'),
      },
    },
    {
      method: "GET",
      path: `${USERS}/direct/kubeconfig`,
      expect: {
        status: 405,
        body: failure(405, "MethodNotAllowed", `get is not supported on resources of kind "users.${GROUP}"`, {
          group: GROUP,
          kind: "users",
        }),
      },
    },
    {
      method: "GET",
      path: "/api/v1/widgets/w1",
      expect: { status: 404, body: failure(404, "NotFound", "the server could not find the requested resource", {}) },
    },
  ];

  before(async () => {
    const carol = { ...alice, metadata: { name: "direct", labels: { team: "blue" } } };
    assert.equal((await call("POST", USERS, { body: JSON.stringify(carol) })).status, 201);
    const widget = { apiVersion: "v1", kind: "Widget", metadata: { name: "w1" } };
    assert.equal((await call("POST", "/api/v1/namespaces/ns1/widgets", { body: JSON.stringify(widget) })).status, 201);
  });

  after(async () => {
    assert.equal((await call("DELETE", `${USERS}/direct`)).status, 200);
  });

  it("startApiServer() answers every read through the pipeline, the same with and without audit hooks", async () => {
    for (const read of reads) await expectBothWays(read);
  });

  it("startApiServer() serves watches, bodies and other methods on resources in the pipeline, only the rest through fastify", async () => {
    api.hooksListen = false;
    try {
      for (const [method, path, body, status, viaFastify] of [
        ["GET", `${USERS}?watch=true&timeoutSeconds=1`, undefined, 200, false],
        ["GET", `${USERS}/direct`, "{}", 200, false],
        ["HEAD", `${USERS}/direct`, undefined, 200, false],
        ["OPTIONS", `${USERS}/direct`, undefined, 405, false],
        ["TRACE", `${USERS}/direct`, undefined, 404, false],
        ["GET", `/apis/${GROUP}/v1/nothings/x`, undefined, 404, false],
        ["GET", "/version", undefined, 200, true],
        ["GET", `/apis/${GROUP}/v1`, undefined, 200, true],
      ] as const) {
        const before = api.fastifyRequests;
        const res = await call(method, path, { body });
        assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
        assert.equal(api.fastifyRequests, before + (viaFastify ? 1 : 0), `${method} ${path}`);
      }
    } finally {
      api.hooksListen = true;
    }
  });

  it("startApiServer() counts pipeline reads in /metrics and calls the hooks only while they listen", async () => {
    const count = async () => {
      const text = (await call("GET", "/metrics")).text;
      const match =
        /apiserver_request_total\{verb="GET",group="test.platform.sh",resource="users",subresource="",code="404"\} (\d+)/.exec(
          text,
        );
      return Number(match?.[1] ?? 0);
    };
    const before = await count();
    const hooked = api.completed.length;
    api.hooksListen = false;
    try {
      await call("GET", `${USERS}/missing`);
    } finally {
      api.hooksListen = true;
    }
    assert.equal(await count(), before + 1);
    assert.equal(api.completed.length, hooked + 1, "only the /metrics read itself reached the hook");
    await call("GET", `${USERS}/missing`);
    assert.equal(await count(), before + 2);
    assert.equal(api.completed.at(-2)?.code, 404, "the audited read reached the hook");
  });
});

// The same for writes: each case runs after its setup, once with hooks listening and once without.
describe("startApiServer() pipeline writes", () => {
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
  /** dw as the test store answers a create. */
  const created = (spec: object = { email: "alice@example.com" }, labels: object | null = { team: "blue" }) => ({
    apiVersion: `${GROUP}/v1`,
    kind: "User",
    metadata: {
      name: "dw",
      ...(labels ? { labels } : {}),
      uid: "uid-dw",
      resourceVersion: "*",
      creationTimestamp: EPOCH,
    },
    spec,
  });
  const dwNotFound = (name: string) =>
    failure(404, "NotFound", `users.${GROUP} "${name}" not found`, { group: GROUP, kind: "users", name });
  const deleted = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: { name: "dw", group: GROUP, kind: "users", uid: "uid-dw" },
    code: 200,
  };
  const unsupported = (types: string) =>
    failure(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: ${types}`,
    );
  const empty = { status: 400, body: failure(400, "BadRequest", "the request body is empty: an object is required") };
  const writes: Case[] = [
    { method: "POST", path: USERS, body: dw(), setup: absent, expect: { status: 201, body: created() } },
    {
      method: "POST",
      path: `/kubernetes/management${USERS}`,
      body: dw(),
      setup: absent,
      expect: { status: 201, body: created() },
    },
    {
      method: "POST",
      path: `${USERS}?pretty=true`,
      body: dw(),
      setup: absent,
      expect: { status: 201, body: `${JSON.stringify(created(), null, 2)}\n` },
    },
    {
      method: "POST",
      path: USERS,
      body: dw(),
      headers: { accept: "application/yaml" },
      setup: absent,
      expect: {
        status: 201,
        contentType: "application/yaml",
        body: `apiVersion: ${GROUP}/v1\nkind: User\nmetadata:\n  name: dw\n  labels:\n    team: blue\n  uid: uid-dw\n  resourceVersion: *\n  creationTimestamp: ${EPOCH}\nspec:\n  email: alice@example.com\n`,
      },
    },
    {
      method: "POST",
      path: USERS,
      body: dw(),
      setup: present,
      expect: {
        status: 409,
        body: failure(409, "AlreadyExists", `users.${GROUP} "dw" already exists`, {
          group: GROUP,
          kind: "users",
          name: "dw",
        }),
      },
    },
    {
      method: "POST",
      path: USERS,
      body: "{",
      setup: absent,
      expect: {
        status: 400,
        body: failure(
          400,
          "BadRequest",
          "the request body is not valid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
      },
    },
    {
      method: "POST",
      path: USERS,
      body: yaml,
      headers: { "content-type": "application/yaml" },
      setup: absent,
      expect: { status: 201, body: created({ email: "dw@example.com" }, null) },
    },
    {
      method: "POST",
      path: USERS,
      body: dw(),
      headers: { "content-type": "application/json; charset=utf-8" },
      setup: absent,
      expect: { status: 201, body: created() },
    },
    {
      method: "POST",
      path: `${USERS}?fieldValidation=Warn`,
      body: dw({ spec: { unknown: 1 } }),
      setup: absent,
      expect: { status: 201, warning: '299 - "unknown field \\"spec.unknown\\""', body: created({ unknown: 1 }) },
    },
    {
      method: "POST",
      path: `${USERS}?dryRun=All`,
      body: dw(),
      setup: absent,
      expect: { status: 201, body: created() },
    },
    {
      method: "POST",
      path: `${USERS}?dryRun=Sometimes`,
      body: dw(),
      setup: absent,
      expect: {
        status: 422,
        check: (text) => {
          const status = JSON.parse(text);
          assert.equal(status.reason, "Invalid");
          assert.equal(
            status.message,
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Sometimes"}: supported values: "All"',
          );
          assert.equal(status.details.kind, "CreateOptions");
        },
      },
    },
    {
      method: "POST",
      path: USERS,
      body: "hello",
      headers: { "content-type": "text/plain" },
      setup: absent,
      expect: { status: 415, body: unsupported("application/json, application/yaml") },
    },
    { method: "POST", path: USERS, body: "", setup: absent, expect: empty },
    { method: "POST", path: USERS, setup: absent, expect: empty },
    {
      method: "POST",
      path: USERS,
      body: dw(),
      token: "bob-token",
      setup: absent,
      expect: {
        status: 403,
        body: failure(
          403,
          "Forbidden",
          `users.${GROUP} is forbidden: User "bob" cannot create resource "users" in API group "${GROUP}" at the cluster scope: no rule allows it`,
          { group: GROUP, kind: "users", name: "" },
        ),
      },
    },
    { method: "POST", path: USERS, body: dw(), token: null, setup: absent, expect: unauthorized },
    { method: "POST", path: USERS, body: dw(), token: "wrong", setup: absent, expect: unauthorized },
    {
      method: "POST",
      path: `${USERS}/dw/kubeconfig`,
      body: "{}",
      setup: present,
      expect: {
        status: 201,
        body: { apiVersion: `${GROUP}/v1`, kind: "UserKubeConfig", metadata: {}, status: { for: "dw" } },
      },
    },
    {
      method: "POST",
      path: `/apis/${GROUP}/v1/selves`,
      body: "{}",
      expect: { status: 201, body: { status: { user: "admin" } } },
    },
    {
      method: "POST",
      path: "/api/v1/namespaces/ns1/widgets",
      body: '{"metadata":{"name":"w1"}}',
      expect: {
        status: 409,
        body: failure(409, "AlreadyExists", 'widgets "w1" already exists', { group: "", kind: "widgets", name: "w1" }),
      },
    },
    {
      method: "PUT",
      path: `${USERS}/dw`,
      body: dw(),
      setup: present,
      expect: {
        status: 200,
        body: {
          apiVersion: `${GROUP}/v1`,
          kind: "User",
          metadata: { name: "dw", labels: { team: "blue" }, resourceVersion: "*" },
          spec: { email: "alice@example.com" },
        },
      },
    },
    {
      method: "PUT",
      path: `${USERS}/missing`,
      body: dw({ metadata: { name: "missing" } }),
      expect: { status: 404, body: dwNotFound("missing") },
    },
    {
      method: "PUT",
      path: `${USERS}/dw`,
      body: dw(),
      setup: present,
      headers: { accept: "text/html" },
      expect: notAcceptable,
    },
    {
      method: "PATCH",
      path: `${USERS}/dw`,
      body: '{"metadata":{"labels":{"team":"red"}}}',
      headers: { "content-type": "application/merge-patch+json" },
      setup: present,
      // The test store keeps the stored metadata.
      expect: { status: 200, body: created() },
    },
    {
      method: "PATCH",
      path: `${USERS}/dw`,
      body: '{"metadata":{"labels":{"team":"red"}}}',
      headers: { "content-type": "application/strategic-merge-patch+json" },
      setup: present,
      expect: {
        status: 415,
        body: unsupported("application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"),
      },
    },
    { method: "DELETE", path: `${USERS}/dw`, setup: present, expect: { status: 200, body: deleted } },
    {
      method: "DELETE",
      path: `${USERS}/dw`,
      body: '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}',
      setup: present,
      expect: { status: 200, body: deleted },
    },
    { method: "DELETE", path: `${USERS}/missing`, expect: { status: 404, body: dwNotFound("missing") } },
    {
      method: "DELETE",
      path: "/api/v1/namespaces/ns1/widgets/w1",
      expect: {
        status: 405,
        body: failure(405, "MethodNotAllowed", 'delete is not supported on resources of kind "widgets"', {
          group: "",
          kind: "widgets",
        }),
      },
    },
    {
      method: "DELETE",
      path: "/api/v1/namespaces/ns1/widgets",
      expect: {
        status: 405,
        body: failure(405, "MethodNotAllowed", 'deletecollection is not supported on resources of kind "widgets"', {
          group: "",
          kind: "widgets",
        }),
      },
    },
  ];

  before(async () => {
    const widget = { apiVersion: "v1", kind: "Widget", metadata: { name: "w1" } };
    const res = await call("POST", "/api/v1/namespaces/ns1/widgets", { body: JSON.stringify(widget) });
    assert.ok(res.status === 201 || res.status === 409, `widget: ${res.status}`);
  });

  after(absent);

  it("startApiServer() answers every write through the pipeline, the same with and without audit hooks", async () => {
    for (const write of writes) await expectBothWays(write);
  });

  /** A dry-run create of dw with the given headers and body parts (each part is one write). */
  const streamed = (headers: Record<string, string>, parts: string[]) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpsRequest(
        `${api.server.url}${USERS}?dryRun=All`,
        { method: "POST", headers: { authorization: "Bearer admin-token", ...headers }, ca: api.ca },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: normalized(text) }));
        },
      );
      req.on("error", reject);
      for (const part of parts.slice(0, -1)) req.write(part);
      req.end(parts.at(-1));
    });

  it("startApiServer() takes chunked bodies, quoted media type parameters and bodies without Content-Type", async () => {
    await absent();
    const body = dw();
    const length = String(Buffer.byteLength(body));
    const sent: [string, Record<string, string>, string[]][] = [
      [
        "chunked",
        { "content-type": "application/json", "transfer-encoding": "chunked" },
        [body.slice(0, 9), body.slice(9)],
      ],
      ["chunked without Content-Type", { "transfer-encoding": "chunked" }, [body]],
      ["quoted parameter", { "content-type": 'application/json; charset="utf-8"', "content-length": length }, [body]],
      ["no Content-Type", { "content-length": length }, [body]],
    ];
    for (const [label, headers, parts] of sent) {
      const before = api.fastifyRequests;
      const res = await streamed(headers, parts);
      assert.equal(res.status, 201, `${label}: ${res.text}`);
      assert.deepEqual(JSON.parse(res.text), created(), label);
      assert.equal(api.fastifyRequests, before, label);
    }
    const emptyChunked = await streamed({ "content-type": "application/json", "transfer-encoding": "chunked" }, [""]);
    assert.equal(emptyChunked.status, 400);
    assert.equal(JSON.parse(emptyChunked.text).message, "the request body is empty: an object is required");
  });

  it("startApiServer() answers 415 to a Content-Type that is no media type, before reading the body", async () => {
    const length = String(Buffer.byteLength(dw()));
    for (const type of ["json", "", "application/json/x", "application /json"]) {
      const res = await streamed({ "content-type": type, "content-length": length }, [dw()]);
      assert.equal(res.status, 415, JSON.stringify(type));
      assert.deepEqual(
        JSON.parse(res.text),
        unsupported(
          "application/json, application/yaml, application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        ),
      );
    }
    // Parameters are not the media type's business.
    const odd = await call("POST", `${USERS}?dryRun=All`, {
      body: dw(),
      headers: { "content-type": "application/json;;x" },
    });
    assert.equal(odd.status, 201);
  });
});
