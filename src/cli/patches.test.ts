import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const entry = fileURLToPath(new URL("./patches-main.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "patches-cli-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function cli(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [entry, ...args], { input, encoding: "utf8", timeout: 300_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const settings = file(
  "virtualcluster.yaml",
  `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: value.toUpperCase()
          reverseExpression: value.toLowerCase()
        - path: subsets[*].addresses[*].hostname
          expression: "value ? value + '.' + context.vcluster.name : value"
        - path: metadata.annotations["db"]
          reference: { apiVersion: v1, kind: Secret }
    secrets:
      patches:
        - path: data.url
          expression: "btoa(virtualToHostDNS(atob(value)))"
`,
);

const endpoints = file(
  "endpoints.yaml",
  `
apiVersion: v1
kind: Endpoints
metadata:
  name: web
  namespace: default
  annotations: { note: hello, db: db-password }
subsets:
  - addresses: [{ ip: 10.0.0.1, hostname: pod-a }, { ip: 10.0.0.2 }]
`,
);

test("patches apply prints the patched object as YAML and lists references on stderr", () => {
  const { code, stdout, stderr } = cli([
    "patches",
    "apply",
    "-f",
    settings,
    "--resource",
    "endpoints",
    "--name",
    "vc",
    "--namespace",
    "vc-ns",
    endpoints,
  ]);
  assert.equal(code, 0, stderr);
  const object = parse(stdout);
  // The patches saw only the user's annotations; the syncer's marks came after them.
  assert.deepEqual(object.metadata.annotations, {
    note: "HELLO",
    db: "DB-PASSWORD-x-default-x-vc",
    "virtualcluster.platform.sh/object-name": "web",
    "virtualcluster.platform.sh/object-namespace": "default",
    "virtualcluster.platform.sh/object-uid": "",
    "virtualcluster.platform.sh/object-kind": "/v1, Kind=Endpoints",
    "virtualcluster.platform.sh/object-host-name": "web-x-default-x-vc",
    "virtualcluster.platform.sh/object-host-namespace": "vc-ns",
    "virtualcluster.platform.sh/managed-annotations": "db\nnote",
  });
  assert.equal(object.metadata.name, "web-x-default-x-vc");
  assert.equal(object.metadata.namespace, "vc-ns");
  assert.deepEqual(object.subsets[0].addresses, [{ ip: "10.0.0.1", hostname: "pod-a.vc" }, { ip: "10.0.0.2" }]);
  assert.equal(
    stderr,
    "referenced: v1/Secret default/DB-PASSWORD -> vc-ns/DB-PASSWORD-x-default-x-vc (sync.toHost.endpoints.patches[2] at metadata.annotations.db)\n",
  );
});

test("patches apply reads standard input, prints JSON and runs the reverse direction", () => {
  const host = JSON.stringify({ metadata: { name: "web-x-default-x-vc", annotations: { note: "HELLO" } } });
  const { code, stdout, stderr } = cli(
    ["patches", "apply", "-f", settings, "--resource", "endpoints", "--direction", "to-virtual", "-o", "json", "-"],
    host,
  );
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout).metadata.annotations, { note: "hello" });
});

test("patches apply uses the secrets list and the built-ins", () => {
  const secret = file(
    "secret.json",
    JSON.stringify({
      metadata: { name: "s", namespace: "default" },
      data: { url: btoa("nginx.default.svc.cluster.local") },
    }),
  );
  const { code, stdout } = cli([
    "patches",
    "apply",
    "-f",
    settings,
    "--resource",
    "secrets",
    "--name",
    "vcluster",
    "--namespace",
    "vcluster-ns",
    secret,
  ]);
  assert.equal(code, 0);
  assert.equal(atob(parse(stdout).data.url), "nginx-x-default-x-vcluster.vcluster-ns.svc.cluster.local");
});

test("patches apply passes --host-object as context.hostObject", () => {
  const withHost = file(
    "with-host.yaml",
    "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.labels.from\n          expression: context.hostObject?.metadata.name ?? 'none'\n",
  );
  const hostObject = file("host.yaml", "metadata:\n  name: the-host-copy\n");
  const object = file("labelled.yaml", "metadata:\n  name: x\n  labels:\n    from: ''\n");
  const { stdout } = cli([
    "patches",
    "apply",
    "-f",
    withHost,
    "--resource",
    "endpoints",
    "--host-object",
    hostObject,
    object,
  ]);
  assert.equal(parse(stdout).metadata.labels.from, "the-host-copy");
});

test("patches apply fails with one line naming the patch and the reason", () => {
  const looping = file(
    "loop.yaml",
    "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.name2\n          expression: value\n        - path: subsets[*]\n          expression: '(() => { for (;;) {} })()'\n",
  );
  const { code, stdout, stderr } = cli(["patches", "apply", "-f", looping, "--resource", "endpoints", endpoints]);
  assert.equal(code, 1);
  assert.equal(stdout, "");
  assert.equal(
    stderr,
    "sync.toHost.endpoints.patches[1].expression (at subsets.0): the expression exceeded the CPU time limit of 100 ms\n",
  );
});

test("patches apply reports invalid settings, files and options", () => {
  const bad = file(
    "bad.yaml",
    "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: 'value +'\n",
  );
  assert.deepEqual(cli(["patches", "apply", "-f", bad, "--resource", "endpoints", endpoints]), {
    code: 1,
    stdout: "",
    stderr: "sync.toHost.endpoints.patches[0].expression: syntax error: Unexpected token (line 1, column 8)\n",
  });
  assert.deepEqual(
    cli(["patches", "apply", "-f", join(dir, "missing.yaml"), "--resource", "endpoints", endpoints]).stderr,
    `${join(dir, "missing.yaml")}: cannot read the settings file (ENOENT)\n`,
  );
  assert.equal(
    cli(["patches", "apply", "-f", settings, "--resource", "endpoints", "-"], "- just\n- a list\n").stderr,
    "object -: must be a single object (YAML or JSON)\n",
  );
  const wrongResource = cli(["patches", "apply", "-f", settings, "--resource", "pods", endpoints]);
  assert.equal(wrongResource.code, 1);
  assert.match(
    wrongResource.stderr,
    /argument 'pods' is invalid. Allowed choices are endpoints, services, endpointslices, configmaps, secrets/,
  );
  assert.match(
    cli(["patches", "apply", "--resource", "endpoints", endpoints]).stderr,
    /required option '-f, --file <file>' not specified/,
  );
});

test("patches validate reports every problem, one line each", () => {
  const bad = file(
    "many.yaml",
    `
sync:
  toHost:
    endpoints:
      patches:
        - path: a
          expression: value
          labels: {}
        - path: a
          expression: "let x = 1"
    secrets:
      patches:
        - path: metadata.namespace
          reference: { apiVersion: v1, kindPath: kind }
    pods: {}
`,
  );
  const { code, stdout, stderr } = cli(["patches", "validate", "-f", bad]);
  assert.equal(code, 1);
  assert.equal(stdout, "");
  assert.deepEqual(stderr.trimEnd().split("\n"), [
    "sync.toHost.pods: Forbidden: unknown field; known fields: endpoints, services, endpointSlices, configMaps, secrets, namespaces",
    "sync.toHost.endpoints.patches[0] can only use one of: expression, labels or reference",
    'sync.toHost.endpoints.patches[0] and sync.toHost.endpoints.patches[1] have the same path "a"',
    "sync.toHost.endpoints.patches[1].expression: only a single expression is allowed, not a variable declaration",
    'sync.toHost.secrets.patches[0].path: Invalid value: "metadata.namespace": metadata.name and metadata.namespace are set by the syncer and cannot be patched',
    "sync.toHost.secrets.patches[0].reference.kind: Required value: a reference patch needs apiVersion and kind",
    "sync.toHost.secrets.patches[0].reference.namePath: Required value: namePath is required when apiVersionPath, kindPath or namespacePath is set",
  ]);
});

test("patches validate accepts a good file", () => {
  assert.deepEqual(cli(["patches", "validate", "-f", settings]), {
    code: 0,
    stdout: `${settings}: valid (sync.toHost.endpoints.patches: 3 patches, sync.toHost.services.patches: 0 patches, sync.toHost.endpointSlices.patches: 0 patches, sync.toHost.configMaps.patches: 0 patches, sync.toHost.secrets.patches: 1 patch)\n`,
    stderr: "",
  });
});

test("config defaults prints the defaulted settings as YAML", () => {
  const { code, stdout } = cli(["config", "defaults"]);
  assert.equal(code, 0);
  assert.deepEqual(parse(stdout).sync.toHost, {
    endpoints: { enabled: true, patches: [] },
    services: { enabled: true, patches: [] },
    endpointSlices: { enabled: true, patches: [] },
    configMaps: { enabled: true, all: false, patches: [] },
    secrets: { enabled: true, all: false, patches: [] },
    namespaces: { enabled: false },
  });
  const shared = file("shared.yaml", "external:\n  platform:\n    apiKey: {}\n");
  const merged = parse(cli(["config", "defaults", "-f", shared, "--namespace", "vc-ns"]).stdout);
  assert.deepEqual(merged.external.platform.apiKey, {
    secretName: "virtualcluster-platform-api-key",
    namespace: "vc-ns",
    createRBAC: true,
  });
});

test("config defaults reports bad settings with field paths", () => {
  const bad = file("bad-defaults.yaml", "sync: {toHost: {endpoints: {enabled: maybe}}}\n");
  assert.deepEqual(cli(["config", "defaults", "-f", bad]), {
    code: 1,
    stdout: "",
    stderr: 'sync.toHost.endpoints.enabled: Invalid value: "maybe": must be a boolean\n',
  });
});

test("patches apply names a failing built-in once", () => {
  const dns = file(
    "dns.yaml",
    "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations.b\n          expression: virtualToHostDNS(value)\n",
  );
  const object = file("dns-object.yaml", "metadata:\n  name: x\n  namespace: d\n  annotations:\n    b: nope\n");
  const { code, stderr } = cli(["patches", "apply", "-f", dns, "--resource", "endpoints", object]);
  assert.equal(code, 1);
  assert.equal(
    stderr,
    'sync.toHost.endpoints.patches[0].expression (at metadata.annotations.b): TypeError: virtualToHostDNS: "nope" is not of the form <name>.<namespace>.svc[.<cluster-domain>]\n',
  );
});

test("patches apply -o yaml quotes every string YAML 1.1 (kubectl) or 1.2 would read as something else", () => {
  const object = file(
    "yes-no.json",
    JSON.stringify({
      metadata: {
        name: "web",
        namespace: "default",
        annotations: { a: "yes", b: "no", c: "on", d: "off", e: "1_000" },
      },
      subsets: [{ addresses: [{ ip: "10.0.0.1", hostname: "y" }] }],
    }),
  );
  const plain = file("plain.yaml", "sync: {toHost: {endpoints: {patches: []}}}\n");
  const { code, stdout, stderr } = cli(["patches", "apply", "-f", plain, "--resource", "endpoints", object]);
  assert.equal(code, 0, stderr);
  for (const line of ['a: "yes"', 'b: "no"', 'c: "on"', 'd: "off"', 'e: "1_000"', 'hostname: "y"']) {
    assert.ok(stdout.includes(line), `${line} in\n${stdout}`);
  }
  assert.deepEqual(parse(stdout, { version: "1.1" }).metadata.annotations.a, "yes");
});

test("patches apply reads YAML as kubectl does and refuses a label or annotation value that is not a string", () => {
  const plain = file("plain2.yaml", "sync: {toHost: {endpoints: {patches: []}}}\n");
  const unquoted = file("unquoted.yaml", "metadata: {name: web, namespace: default, annotations: {enabled: yes}}\n");
  const refused = cli(["patches", "apply", "-f", plain, "--resource", "endpoints", unquoted]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^object \S+unquoted.yaml: metadata\.annotations\.enabled must be a string, not boolean/,
  );
  const numbered = file(
    "number-patch.yaml",
    "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations.size\n          expression: value.length\n",
  );
  const quoted = file("quoted.yaml", 'metadata: {name: web, namespace: default, annotations: {size: "abc"}}\n');
  const failed = cli(["patches", "apply", "-f", numbered, "--resource", "endpoints", quoted]);
  assert.equal(failed.code, 1);
  assert.equal(
    failed.stderr,
    "sync.toHost.endpoints.patches[0].expression (at metadata.annotations.size): metadata.annotations.size must be a string (label and annotation values are strings), not number\n",
  );
});

test("patches apply applies to each item of a List and prints a List", () => {
  const list = file(
    "list.yaml",
    `
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: default, annotations: {note: one}}}
  - {apiVersion: v1, kind: Endpoints, metadata: {name: b, namespace: team, annotations: {note: two}}}
`,
  );
  const { code, stdout, stderr } = cli([
    "patches",
    "apply",
    "-f",
    settings,
    "--resource",
    "endpoints",
    "--name",
    "vc",
    list,
  ]);
  assert.equal(code, 0, stderr);
  const output = parse(stdout);
  assert.equal(output.kind, "List");
  assert.deepEqual(
    output.items.map((item: { metadata: { name: string; annotations: { note: string } } }) => [
      item.metadata.name,
      item.metadata.annotations.note,
    ]),
    [
      ["a-x-default-x-vc", "ONE"],
      ["b-x-team-x-vc", "TWO"],
    ],
  );
});
