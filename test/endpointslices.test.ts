// EndpointSlices (discovery.k8s.io/v1) on the stand-alone cluster API server (`virtualcluster apiserver`, a process)
// through kubectl: served and validated as Kubernetes serves them, the `kubernetes` Service's slice kept by the server,
// and the Endpoints of selector-less Services mirrored as Kubernetes' EndpointSlice mirroring controller does (what is
// mirrored, labels, annotations, owner, one slice per ports and address family, the 1000-address limit).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { waitFor } from "./support/wait-for.ts";

interface Slice {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
  };
  addressType: string;
  endpoints: { addresses: string[]; conditions?: { ready?: boolean }; hostname?: string }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

const MIRRORED_BY = "endpointslicemirroring-controller.k8s.io";

describe("EndpointSlices on the cluster API server", { skip: kubectlSkip, timeout: 180_000 }, () => {
  let server: ClusterApiServerProcess;
  let kubectl: Kubectl;

  const apply = (yaml: string) => kubectl.ok(["apply", "-f", "-"], yaml);
  const slicesOf = async (service: string): Promise<Slice[]> =>
    JSON.parse(
      await kubectl.ok([
        "get",
        "endpointslices",
        "-n",
        "default",
        "-l",
        `kubernetes.io/service-name=${service}`,
        "-o",
        "json",
      ]),
    ).items;
  const selectorless = (name: string, labels = "") => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata:
  name: ${name}
  namespace: default
  labels: {app: ${name}${labels}}
  annotations: {team: blue, endpoints.kubernetes.io/last-change-trigger-time: "2024-01-01T00:00:00Z"}
subsets:
- addresses: [{ip: 10.0.0.1, hostname: a}, {ip: "fd00::1"}]
  notReadyAddresses: [{ip: 10.0.0.2}]
  ports: [{name: http, port: 8080}]
- addresses: [{ip: 10.0.0.3}]
  ports: [{name: admin, port: 9090, protocol: UDP}]
`;

  before(async () => {
    server = await startClusterApiServerProcess();
    kubectl = new Kubectl(server.kubeconfig);
  });
  after(() => server?.stop());

  it("serves discovery.k8s.io/v1 EndpointSlices, with the kubernetes Service's own slice", async () => {
    const resources = await kubectl.ok(["api-resources", "--api-group", "discovery.k8s.io", "--no-headers"]);
    assert.match(resources, /^endpointslices\s+discovery\.k8s\.io\/v1\s+true\s+EndpointSlice$/m);
    const own = JSON.parse(await kubectl.ok(["get", "endpointslice", "kubernetes", "-n", "default", "-o", "json"]));
    assert.equal(own.metadata.labels["kubernetes.io/service-name"], "kubernetes");
    assert.equal(own.ports[0].port, Number(new URL(server.url).port));
    const table = await kubectl.ok(["get", "endpointslices", "-n", "default"]);
    assert.match(table, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/m);
  });

  it("mirrors the Endpoints of a selector-less Service: per ports and family, labels, annotations, owner", async () => {
    await apply(selectorless("db"));
    await waitFor(async () => (await slicesOf("db")).length === 3, "three mirrored slices");
    const slices = await slicesOf("db");
    const endpoints = JSON.parse(await kubectl.ok(["get", "endpoints", "db", "-n", "default", "-o", "json"]));
    for (const slice of slices) {
      assert.equal(slice.metadata.labels?.["endpointslice.kubernetes.io/managed-by"], MIRRORED_BY);
      assert.equal(slice.metadata.labels?.app, "db");
      assert.match(slice.metadata.name, /^db-[a-z0-9]{5}$/);
      assert.equal(slice.metadata.annotations?.team, "blue");
      assert.equal(slice.metadata.annotations?.["endpoints.kubernetes.io/last-change-trigger-time"], undefined);
      assert.deepEqual(
        slice.metadata.ownerReferences?.map((owner) => [owner.kind, owner.name, owner.uid, owner.controller]),
        [["Endpoints", "db", endpoints.metadata.uid, true]],
      );
    }
    const http4 = slices.find((slice) => slice.addressType === "IPv4" && slice.ports?.[0].name === "http");
    assert.deepEqual(http4?.endpoints, [
      { addresses: ["10.0.0.1"], conditions: { ready: true }, hostname: "a" },
      { addresses: ["10.0.0.2"], conditions: { ready: false } },
    ]);
    assert.deepEqual(http4?.ports, [{ name: "http", port: 8080, protocol: "TCP" }]);
    const http6 = slices.find((slice) => slice.addressType === "IPv6");
    assert.deepEqual(http6?.endpoints, [{ addresses: ["fd00::1"], conditions: { ready: true } }]);
    const admin = slices.find((slice) => slice.ports?.[0].name === "admin");
    assert.deepEqual(admin?.ports, [{ name: "admin", port: 9090, protocol: "UDP" }]);

    // A change keeps the slice's name; a deletion takes the slices with it.
    const before = http4?.metadata.name;
    await kubectl.ok([
      "patch",
      "endpoints",
      "db",
      "-n",
      "default",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/subsets/0/addresses/0/ip","value":"10.0.0.9"}]',
    ]);
    await waitFor(
      async () =>
        (await slicesOf("db")).some(
          (slice) => slice.metadata.name === before && slice.endpoints[0].addresses[0] === "10.0.0.9",
        ),
      "the slice to follow the change",
    );
    await kubectl.ok(["delete", "endpoints", "db", "-n", "default"]);
    await waitFor(async () => (await slicesOf("db")).length === 0, "the slices to go with the Endpoints");
  });

  it("does not mirror Endpoints of a Service with a selector, without a Service, or labelled skip-mirror", async () => {
    await apply(`${selectorless("skipped", ', endpointslice.kubernetes.io/skip-mirror: "true"')}`);
    await apply(selectorless("selected"));
    await waitFor(async () => (await slicesOf("selected")).length === 3, "the slices before the selector");
    await kubectl.ok(["patch", "service", "selected", "-n", "default", "-p", '{"spec":{"selector":{"app":"x"}}}']);
    await waitFor(async () => (await slicesOf("selected")).length === 0, "the slices to go once a selector is set");
    await apply(`
apiVersion: v1
kind: Endpoints
metadata: {name: lonely, namespace: default}
subsets: [{addresses: [{ip: 10.1.0.1}], ports: [{port: 80}]}]
`);
    await apply(selectorless("marker"));
    await waitFor(async () => (await slicesOf("marker")).length === 3, "a later Endpoints mirrored (all work done)");
    assert.deepEqual(await slicesOf("skipped"), []);
    assert.deepEqual(await slicesOf("lonely"), []);
  });

  it("reads no Endpoints again for the echo of its own slice writes", async () => {
    // The storage's reads of Endpoints, as /metrics counts them: a create's event carries the object, so mirroring it
    // needs none; re-reading it for the echo of each slice written cost every mirrored write a read and a decode.
    const endpointsReads = async () =>
      (await kubectl.ok(["get", "--raw", "/metrics"]))
        .split("\n")
        .filter((line) => line.startsWith("apiserver_storage_operations_total{"))
        .filter((line) => line.includes('operation="get"') && line.includes('resource="endpoints"'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    const endpointsOf = (yaml: string) => yaml.slice(yaml.indexOf("---"));
    const serviceOf = (yaml: string) => yaml.slice(0, yaml.indexOf("---"));
    // The Services first, then an Endpoints mirrored after them: every reconcile their events asked for is done
    // (one at a time, in order).
    await kubectl.ok(
      ["create", "-f", "-"],
      ["echo", "echo-marker", "echo-ready"].map((name) => serviceOf(selectorless(name))).join("---\n"),
    );
    await kubectl.ok(["create", "-f", "-"], endpointsOf(selectorless("echo-ready")));
    await waitFor(async () => (await slicesOf("echo-ready")).length === 3, "the Services' reconciles done");
    const before = await endpointsReads();
    await kubectl.ok(["create", "-f", "-"], endpointsOf(selectorless("echo")));
    await waitFor(async () => (await slicesOf("echo")).length === 3, "three mirrored slices");
    // Whatever the echoes asked for comes before a later Endpoints' turn.
    await kubectl.ok(["create", "-f", "-"], endpointsOf(selectorless("echo-marker")));
    await waitFor(async () => (await slicesOf("echo-marker")).length === 3, "a later Endpoints mirrored");
    assert.equal((await endpointsReads()) - before, 0);
  });

  it("puts back a mirrored slice that someone else changed", async () => {
    await apply(selectorless("restored"));
    await waitFor(async () => (await slicesOf("restored")).length === 3, "three mirrored slices");
    const ipv6 = (await slicesOf("restored")).find((slice) => slice.addressType === "IPv6");
    const name = ipv6?.metadata.name ?? "";
    await kubectl.ok([
      "patch",
      "endpointslice",
      name,
      "-n",
      "default",
      "--type=merge",
      "-p",
      '{"endpoints":[{"addresses":["fd00::99"]}]}',
    ]);
    await waitFor(
      async () =>
        (await slicesOf("restored")).some(
          (slice) => slice.metadata.name === name && slice.endpoints[0].addresses[0] === "fd00::1",
        ),
      "the slice put back as the Endpoints say",
    );
  });

  it("mirrors at most 1000 addresses of a subset and says so in a Warning event", async () => {
    const addresses = Array.from({ length: 1002 }, (_, i) => ({ ip: `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}` }));
    await apply(
      JSON.stringify({
        apiVersion: "v1",
        kind: "List",
        items: [
          {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name: "big", namespace: "default" },
            spec: { ports: [{ port: 80 }] },
          },
          {
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: "big", namespace: "default" },
            subsets: [{ addresses, ports: [{ port: 80 }] }],
          },
        ],
      }),
    );
    await waitFor(async () => (await slicesOf("big")).length === 1, "the slice of the big Endpoints");
    assert.equal((await slicesOf("big"))[0].endpoints.length, 1000);
    await waitFor(async () => {
      const events: { reason: string; message: string; involvedObject: { name: string } }[] = JSON.parse(
        await kubectl.ok(["get", "events", "-n", "default", "-o", "json"]),
      ).items;
      return events.some(
        (event) =>
          event.involvedObject.name === "big" &&
          event.reason === "TooManyAddressesToMirror" &&
          /A max of 1000 addresses .* 2 addresses were skipped/.test(event.message),
      );
    }, "the TooManyAddressesToMirror event");
  });

  it("validates slices as the API does and keeps the address type", async () => {
    const bad = await kubectl.run(
      ["apply", "-f", "-"],
      `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: bad, namespace: default}
addressType: IPv4
endpoints: [{addresses: ["fd00::1"]}, {addresses: []}]
ports: [{name: a, port: 80}, {name: a, port: 81, protocol: HTTP}]
`,
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /endpoints\[0\]\.addresses\[0\]: Invalid value: "fd00::1": must be a valid IPv4 address/);
    assert.match(bad.stderr, /endpoints\[1\]\.addresses: Required value/);
    assert.match(bad.stderr, /ports\[1\]\.name: Duplicate value: "a"/);
    assert.match(bad.stderr, /ports\[1\]\.protocol: Unsupported value: "HTTP"/);
    await apply(`
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: custom, namespace: default, labels: {kubernetes.io/service-name: db}}
addressType: IPv4
endpoints: [{addresses: [10.3.0.1]}]
ports: [{port: 80}]
`);
    const stored = JSON.parse(await kubectl.ok(["get", "endpointslice", "custom", "-n", "default", "-o", "json"]));
    assert.deepEqual(stored.ports, [{ name: "", port: 80, protocol: "TCP" }], "the API's defaults");
    const changed = await kubectl.run([
      "patch",
      "endpointslice",
      "custom",
      "-n",
      "default",
      "--type=merge",
      "-p",
      '{"addressType":"IPv6","endpoints":[{"addresses":["fd00::2"]}]}',
    ]);
    assert.notEqual(changed.code, 0);
    assert.match(changed.stderr, /addressType: Invalid value: "IPv6": field is immutable/);
  });
});
