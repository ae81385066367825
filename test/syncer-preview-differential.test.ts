// Preview equals live, for every synced kind (issue 32 item 3): random objects and random patch lists (fast-check)
// through a running virtual cluster (`virtualcluster run`) into a host (`virtualcluster apiserver`), both processes
// over HTTPS, against `virtualcluster patches apply` for the same objects as the virtual API server returns them. Every
// host object must become exactly what the preview prints, the syncer's marks included; only what the host allocates
// itself (a Service's cluster IP, its defaults) may be added.
//
// Runs: SYNC_PREVIEW_RUNS (default 3), each a new virtual cluster with new patch lists; SYNC_PREVIEW_SEED repeats one.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { stringify } from "yaml";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { startRuntimeProcess } from "./support/runtime-process.ts";

const RUNS = Number(process.env.SYNC_PREVIEW_RUNS ?? 3);
const SEED = Number(process.env.SYNC_PREVIEW_SEED ?? Date.now() % 1_000_000);
const VC = "vc";
/** How long the host may take to hold what the preview prints. */
const CONVERGE_SECONDS = 60;

type Json = Record<string, unknown>;

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);

/** Expressions that keep each kind of value valid for the API server, so a difference can only be the sync's. */
const EXPRESSIONS = {
  label: [
    'value + "x"',
    '"p" + value',
    "value.slice(0, 3)",
    "context.vcluster.name",
    "null",
    'valueExists ? value : "d"',
  ],
  annotation: [
    "value.toUpperCase()",
    'value + "-" + context.vcluster.name',
    "JSON.stringify(context.path)",
    "String(valueExists)",
    "null",
  ],
  hostname: ['value + "x"', '"h" + value', "value.slice(0, 2)", "null"],
  portName: ['"p" + value', 'value + "x"'],
  data: ["value.toUpperCase()", "btoa(value)", 'value + "@" + context.vcluster.namespace', "null"],
  secretData: ['btoa(atob(value) + "x")', "btoa(atob(value).toUpperCase())", "null"],
} as const;

type ValueKind = keyof typeof EXPRESSIONS;

/** The paths a kind's patches may take, each with the kind of value found there. */
const PATHS: Record<string, [string, ValueKind][]> = {
  services: [
    ['metadata.labels["a"]', "label"],
    ["metadata.annotations[*]", "annotation"],
    ['metadata.annotations["new"]', "annotation"],
    ["spec.ports[*].name", "portName"],
  ],
  endpoints: [
    ['metadata.labels["a"]', "label"],
    ['metadata.annotations["b"]', "annotation"],
    ["subsets[*].addresses[*].hostname", "hostname"],
    ["subsets[*].ports[*].name", "portName"],
  ],
  endpointslices: [
    ['metadata.labels["a"]', "label"],
    ["metadata.annotations[*]", "annotation"],
    ["endpoints[*].hostname", "hostname"],
    ["ports[*].name", "portName"],
  ],
  configmaps: [
    ["metadata.labels[*]", "label"],
    ["data[*]", "data"],
    ['data["new"]', "data"],
  ],
  secrets: [
    ['metadata.annotations["b"]', "annotation"],
    ["data[*]", "secretData"],
  ],
};
const KINDS = Object.keys(PATHS);
const SETTINGS_KEY: Record<string, string> = {
  services: "services",
  endpoints: "endpoints",
  endpointslices: "endpointSlices",
  configmaps: "configMaps",
  secrets: "secrets",
};

/** A patch list for one kind: distinct paths, each with an expression valid for its values. */
const patchList = (kind: string) =>
  fc
    .uniqueArray(fc.constantFrom(...PATHS[kind]), { maxLength: 3, selector: ([path]) => path })
    .chain((paths) =>
      fc.tuple(
        ...paths.map(([path, valueKind]) =>
          fc.constantFrom(...EXPRESSIONS[valueKind]).map((expression) => ({ path, expression })),
        ),
      ),
    );

/** One object of each kind per index, with random values. */
const objects = fc.array(fc.record({ a: word, b: word, host: word, port: word, data: word }), {
  minLength: 1,
  maxLength: 3,
});

function virtualObjects(values: { a: string; b: string; host: string; port: string; data: string }[]): Json[] {
  return values.flatMap((value, i) => {
    const meta = (name: string, extra: Json = {}) => ({
      name,
      namespace: "default",
      labels: { a: value.a, ...((extra.labels as Json) ?? {}) },
      annotations: { b: value.b },
    });
    const ip = `10.9.${i}.${i + 1}`;
    return [
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta(`svc-${i}`),
        spec: { ports: [{ name: `p${value.port}`, port: 80 }] },
      },
      {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: meta(`svc-${i}`),
        subsets: [{ addresses: [{ ip, hostname: value.host }], ports: [{ name: value.port, port: 8080 }] }],
      },
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: meta(`slice-${i}`, {
          labels: {
            "kubernetes.io/service-name": `svc-${i}`,
            "endpointslice.kubernetes.io/managed-by": "tests.example.com",
          },
        }),
        addressType: "IPv4",
        endpoints: [{ addresses: [ip], hostname: value.host, conditions: { ready: true } }],
        ports: [{ name: value.port, port: 8080, protocol: "TCP" }],
      },
      { apiVersion: "v1", kind: "ConfigMap", metadata: meta(`cm-${i}`), data: { a: value.data, b: value.b } },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: meta(`secret-${i}`),
        type: "Opaque",
        data: { a: btoa(value.data) },
      },
    ];
  });
}

/** True when `expected` is contained in `actual`: same scalars, its keys present with contained values, lists alike. */
function contained(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => contained(item, actual[i]))
    );
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) => contained(value, (actual as Json)[key]));
  }
  return expected === actual;
}

/** The difference between a preview and the host object, or undefined when the host object is what it shows. */
function difference(preview: Json, host: Json | undefined): string | undefined {
  if (!host) return "missing on the host";
  const p = preview.metadata as Json;
  const h = host.metadata as Json;
  for (const field of ["labels", "annotations"]) {
    if (JSON.stringify(sorted(p[field])) !== JSON.stringify(sorted(h[field]))) {
      return `metadata.${field}: preview ${JSON.stringify(p[field])}, host ${JSON.stringify(h[field])}`;
    }
  }
  const { metadata: _p, ...previewBody } = preview;
  const { metadata: _h, status: _s, ...hostBody } = host;
  // What the host allocates or defaults for itself is the host's; everything the preview sets must be there as it is.
  if (!contained(previewBody, hostBody))
    return `body: preview ${JSON.stringify(previewBody)}, host ${JSON.stringify(hostBody)}`;
  return undefined;
}

const sorted = (map: unknown) => Object.entries((map as Json) ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));

describe("preview equals live for every synced kind (fast-check)", { skip: kubectlSkip, timeout: 900_000 }, () => {
  let host: ClusterApiServerProcess;
  let hostctl: Kubectl;
  let dir: string;
  let run = 0;

  before(async () => {
    host = await startClusterApiServerProcess();
    hostctl = new Kubectl(host.kubeconfig);
    dir = await mkdtemp(join(tmpdir(), "vcp-preview-"));
  });
  after(async () => {
    await host?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`gives every host object what \`patches apply\` prints (${RUNS} runs, seed ${SEED})`, async () => {
    const patches = fc.record(Object.fromEntries(KINDS.map((kind) => [kind, patchList(kind)])));
    await fc.assert(
      fc.asyncProperty(patches, objects, async (lists, values) => {
        const namespace = `preview-${++run}`;
        await hostctl.ok(["create", "namespace", namespace]);
        const toHost: Json = {};
        for (const kind of KINDS) {
          toHost[SETTINGS_KEY[kind]] = {
            patches: lists[kind],
            ...(kind === "configmaps" || kind === "secrets" ? { all: true } : {}),
          };
        }
        const settings = stringify({ sync: { toHost } });
        const settingsFile = join(dir, `settings-${run}.yaml`);
        await writeFile(settingsFile, settings);
        const runtime = await startRuntimeProcess({ name: VC, namespace, settings, hostKubeconfig: host.kubeconfig });
        try {
          const vcctl = new Kubectl(runtime.kubeconfig);
          await vcctl.ok(
            ["apply", "-f", "-"],
            JSON.stringify({ apiVersion: "v1", kind: "List", items: virtualObjects(values) }),
          );
          const previews = new Map<string, Json>();
          for (const kind of KINDS) {
            const listed = await vcctl.ok(["-n", "default", "get", kind, "-o", "json"]);
            // The test's own objects (not the mirrored slices, the kubernetes Service or service account tokens).
            const ours = JSON.parse(listed).items.filter((item: Json) => {
              const metadata = item.metadata as { name: string; labels?: Record<string, string> };
              const mirrored =
                metadata.labels?.["endpointslice.kubernetes.io/managed-by"]?.startsWith("endpointslicemirroring");
              return /^(svc|slice|cm|secret)-\d+$/.test(metadata.name) && !mirrored;
            });
            const listFile = join(dir, `${namespace}-${kind}.json`);
            await writeFile(listFile, JSON.stringify({ apiVersion: "v1", kind: "List", items: ours }));
            const preview = await runCli([
              "patches",
              "apply",
              "-f",
              settingsFile,
              "--resource",
              kind,
              "--name",
              VC,
              "--namespace",
              namespace,
              "-o",
              "json",
              listFile,
            ]);
            assert.equal(preview.code, 0, `${kind}: ${preview.stderr}\n${settings}`);
            for (const item of JSON.parse(preview.stdout).items as Json[]) {
              previews.set(`${kind}/${(item.metadata as Json).name}`, item);
            }
          }
          let last = "";
          const deadline = Date.now() + CONVERGE_SECONDS * 1000;
          while (Date.now() < deadline) {
            last = "";
            for (const kind of KINDS) {
              const listed = JSON.parse(await hostctl.ok(["-n", namespace, "get", kind, "-o", "json"])).items as Json[];
              const byName = new Map(listed.map((item) => [(item.metadata as Json).name, item]));
              for (const [key, preview] of previews) {
                if (!key.startsWith(`${kind}/`)) continue;
                const found = difference(preview, byName.get((preview.metadata as Json).name));
                if (found) last += `${key}: ${found}\n`;
              }
            }
            if (last === "") return;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          assert.fail(
            `live differs from the preview after ${CONVERGE_SECONDS} s (seed ${SEED}):\n${last}\nsettings:\n${settings}`,
          );
        } finally {
          await runtime.stop();
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
