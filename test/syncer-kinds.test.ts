// Every synced kind as its declaration says, in a running virtual cluster (`virtualcluster run`) syncing into a host
// (`virtualcluster apiserver`), both processes over HTTPS, seen through kubectl (issue 32): ConfigMap and Service
// patches applied live; what flows back (only through a reverseExpression, wherever its path points); node ports and
// load balancer status true on both sides; EndpointSlices served, mirrored and synced; a name collision resolved the
// moment the holder goes; and `patches apply -o yaml` output that kubectl accepts.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { waitFor } from "./support/wait-for.ts";

const VC = "vc";
const HOST_NS = "kinds-host";
const hostName = (name: string, namespace = "default") => `${name}-x-${namespace}-x-${VC}`;

const SETTINGS = `
sync:
  toHost:
    configMaps:
      all: true
      patches:
        - path: data["url"]
          expression: virtualToHostDNS(value)
    services:
      patches:
        - path: metadata.annotations["team"]
          expression: '"svc-" + value'
    endpoints:
      patches:
        - path: metadata.annotations["dns"]
          expression: virtualToHostDNS(value)
        - path: subsets[*].ports[*].name
          expression: '"h" + value'
          reverseExpression: value.replace(/^h/, "")
    endpointSlices:
      patches:
        - path: endpoints[*].hostname
          expression: 'value + "-" + context.vcluster.name'
`;

// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the objects kubectl prints freely
type Json = Record<string, any>;

describe("synced kinds in a running virtual cluster", { skip: kubectlSkip, timeout: 300_000 }, () => {
  let host: ClusterApiServerProcess;
  let vc: RuntimeProcess;
  let hostctl: Kubectl;
  let vcctl: Kubectl;

  const getJson = async (kubectl: Kubectl, args: string[]): Promise<Json | undefined> => {
    const result = await kubectl.run([...args, "-o", "json"]);
    return result.code === 0 ? JSON.parse(result.stdout) : undefined;
  };
  const onHost = (kind: string, name: string) => getJson(hostctl, ["-n", HOST_NS, "get", kind, name]);
  const inVirtual = (kind: string, name: string) => getJson(vcctl, ["-n", "default", "get", kind, name]);
  const syncErrors = async (name: string): Promise<string[]> =>
    ((await getJson(vcctl, ["-n", "default", "get", "events"]))?.items ?? [])
      .filter((event: Json) => event.reason === "SyncError" && event.involvedObject.name === name)
      .map((event: Json) => `${event.message} (count ${event.count})`);
  const apply = (kubectl: Kubectl, yaml: string) => kubectl.ok(["apply", "-f", "-"], yaml);
  const selectorless = (name: string, annotations = "{}") => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ${name}, namespace: default, annotations: ${annotations}}
subsets:
- addresses: [{ip: 10.4.0.1}, {ip: 10.4.0.2}]
  ports: [{name: http, port: 8080}]
`;

  before(async () => {
    host = await startClusterApiServerProcess();
    hostctl = new Kubectl(host.kubeconfig);
    await hostctl.ok(["create", "namespace", HOST_NS]);
    vc = await startRuntimeProcess({
      name: VC,
      namespace: HOST_NS,
      settings: SETTINGS,
      hostKubeconfig: host.kubeconfig,
    });
    vcctl = new Kubectl(vc.kubeconfig);
  });
  after(async () => {
    await vc?.stop();
    await host?.stop();
  });

  it("applies the ConfigMap and Service patch lists to the host copies", async () => {
    await apply(
      vcctl,
      `
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: default}
data: {url: db.default.svc.cluster.local, other: kept}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default, annotations: {team: blue}}
spec:
  ports: [{name: http, port: 80}]
`,
    );
    await waitFor(async () => (await onHost("configmap", hostName("app"))) !== undefined, "the host ConfigMap");
    const configMap = await onHost("configmap", hostName("app"));
    assert.deepEqual(configMap?.data, { url: `${hostName("db")}.${HOST_NS}.svc.cluster.local`, other: "kept" });
    await waitFor(async () => (await onHost("service", hostName("web"))) !== undefined, "the host Service");
    assert.equal((await onHost("service", hostName("web")))?.metadata.annotations.team, "svc-blue");
  });

  it("restores a host edit of a value whose patch has no reverseExpression, and carries none back", async () => {
    await apply(vcctl, selectorless("db", "{dns: db.default.svc.cluster.local}"));
    const wanted = `${hostName("db")}.${HOST_NS}.svc.cluster.local`;
    await waitFor(async () => (await onHost("endpoints", hostName("db")))?.metadata.annotations.dns === wanted, "dns");
    await hostctl.ok(["-n", HOST_NS, "annotate", "--overwrite", "endpoints", hostName("db"), "dns=changed.example"]);
    await waitFor(
      async () => (await onHost("endpoints", hostName("db")))?.metadata.annotations.dns === wanted,
      "the host copy restored from the virtual object",
    );
    const virtual = await inVirtual("endpoints", "db");
    assert.equal(virtual?.metadata.annotations.dns, "db.default.svc.cluster.local", "nothing flowed back");
    assert.deepEqual(await syncErrors("db"), []);
  });

  it("carries a host change back through a reverseExpression outside labels and annotations", async () => {
    await waitFor(
      async () => (await onHost("endpoints", hostName("db")))?.subsets?.[0].ports[0].name === "hhttp",
      "the patched port name on the host",
    );
    await hostctl.ok([
      "-n",
      HOST_NS,
      "patch",
      "endpoints",
      hostName("db"),
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/subsets/0/ports/0/name","value":"hmetrics"}]',
    ]);
    await waitFor(
      async () => (await inVirtual("endpoints", "db"))?.subsets?.[0].ports[0].name === "metrics",
      "the port name carried back through reverseExpression",
    );
    assert.equal((await onHost("endpoints", hostName("db")))?.subsets?.[0].ports[0].name, "hmetrics");
  });

  it("shows in the virtual cluster the node ports the host allocated and the host's load balancer status", async () => {
    // Taken on the host already: the host allocates another, and the virtual Service shows that one.
    await apply(
      hostctl,
      `
apiVersion: v1
kind: Service
metadata: {name: holder, namespace: ${HOST_NS}}
spec: {type: NodePort, ports: [{port: 80, nodePort: 30081}]}
`,
    );
    await apply(
      vcctl,
      `
apiVersion: v1
kind: Service
metadata: {name: asked, namespace: default}
spec: {type: NodePort, ports: [{port: 80, nodePort: 30080}]}
---
apiVersion: v1
kind: Service
metadata: {name: taken, namespace: default}
spec: {type: NodePort, ports: [{port: 80, nodePort: 30081}]}
---
apiVersion: v1
kind: Service
metadata: {name: balanced, namespace: default}
spec: {type: LoadBalancer, ports: [{port: 443}]}
`,
    );
    await waitFor(async () => (await onHost("service", hostName("asked"))) !== undefined, "the host Service");
    assert.equal((await onHost("service", hostName("asked")))?.spec.ports[0].nodePort, 30080, "requested on the host");
    await waitFor(async () => {
      const [virtual, synced] = [await inVirtual("service", "taken"), await onHost("service", hostName("taken"))];
      const port = synced?.spec.ports[0].nodePort;
      return port !== undefined && port !== 30081 && virtual?.spec.ports[0].nodePort === port;
    }, "the virtual Service to show the node port the host allocated");

    await waitFor(async () => (await onHost("service", hostName("balanced"))) !== undefined, "the host LoadBalancer");
    await hostctl.ok([
      "-n",
      HOST_NS,
      "patch",
      "service",
      hostName("balanced"),
      "--subresource=status",
      "--type=merge",
      "-p",
      '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}',
    ]);
    await waitFor(
      async () => /203\.0\.113\.7/.test(await vcctl.ok(["-n", "default", "get", "service", "balanced"])),
      "the ingress IP in the virtual cluster's EXTERNAL-IP column",
    );
    const balanced = await inVirtual("service", "balanced");
    const synced = await onHost("service", hostName("balanced"));
    assert.deepEqual(
      balanced?.spec.ports.map((port: Json) => port.nodePort),
      synced?.spec.ports.map((port: Json) => port.nodePort),
    );
  });

  it("serves EndpointSlices on both sides and syncs the ones a user writes", async () => {
    // Mirrored from the Endpoints in the virtual cluster, and on the host from the synced Endpoints.
    const addressesOf = async (kubectl: Kubectl, namespace: string, service: string) => {
      const list = await getJson(kubectl, [
        "-n",
        namespace,
        "get",
        "endpointslices",
        "-l",
        `kubernetes.io/service-name=${service}`,
      ]);
      return (list?.items ?? []).flatMap((slice: Json) => slice.endpoints.flatMap((e: Json) => e.addresses)).sort();
    };
    await waitFor(
      async () => (await addressesOf(vcctl, "default", "db")).join() === "10.4.0.1,10.4.0.2",
      "the virtual cluster's mirrored slice",
    );
    await waitFor(
      async () => (await addressesOf(hostctl, HOST_NS, hostName("db"))).join() === "10.4.0.1,10.4.0.2",
      "the host's mirrored slice of the synced Endpoints",
    );
    await apply(
      vcctl,
      `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: custom-a
  namespace: default
  labels: {kubernetes.io/service-name: custom, endpointslice.kubernetes.io/managed-by: controller.example.com}
addressType: IPv4
endpoints: [{addresses: [10.5.0.1], hostname: pod-a, conditions: {ready: true}}]
ports: [{name: http, port: 8080}]
`,
    );
    await waitFor(async () => (await onHost("endpointslice", hostName("custom-a"))) !== undefined, "the synced slice");
    const slice = await onHost("endpointslice", hostName("custom-a"));
    assert.equal(slice?.metadata.labels["kubernetes.io/service-name"], hostName("custom"));
    assert.equal(slice?.metadata.labels["endpointslice.kubernetes.io/managed-by"], "controller.example.com");
    assert.equal(slice?.metadata.labels["virtualcluster.platform.sh/managed-by"], VC);
    assert.deepEqual(slice?.endpoints[0].addresses, ["10.5.0.1"]);
    assert.equal(slice?.endpoints[0].hostname, "pod-a-vc", "the endpointSlices patches");
    // The host's mirrored slices carry the synced Endpoints' labels but are never taken for the syncer's copies.
    assert.equal((await addressesOf(hostctl, HOST_NS, hostName("db"))).length, 2);
    await vcctl.ok(["-n", "default", "delete", "endpointslice", "custom-a"]);
    await waitFor(
      async () => (await onHost("endpointslice", hostName("custom-a"))) === undefined,
      "its host copy gone",
    );
  });

  it("syncs an object waiting for a taken host name as soon as the holder goes, not at its next retry", async () => {
    // c/a-x-b and b-x-c/a both become a-x-b-x-c-x-vc on the host.
    await vcctl.ok(["create", "namespace", "c"]);
    await vcctl.ok(["create", "namespace", "b-x-c"]);
    await apply(vcctl, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a-x-b, namespace: c}\ndata: {from: c}\n");
    await waitFor(async () => (await onHost("configmap", hostName("a-x-b", "c"))) !== undefined, "the holder's copy");
    await apply(vcctl, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b-x-c}\ndata: {from: b-x-c}\n");
    // Its retries back off (5 ms doubling): after the 12th failure the next retry is 5 ms * 2^11 = 10.2 s away.
    await waitFor(
      async () => {
        const events = (await getJson(vcctl, ["-n", "b-x-c", "get", "events"]))?.items ?? [];
        return events.some((event: Json) => event.reason === "SyncError" && event.count >= 12);
      },
      "the waiting object's twelfth failed sync",
      60,
    );
    await vcctl.ok(["-n", "c", "delete", "configmap", "a-x-b"]);
    // Well before that retry: the holder's deletion itself brings the waiting object in.
    await waitFor(
      async () => (await onHost("configmap", hostName("a-x-b", "c")))?.data?.from === "b-x-c",
      "the waiting object's copy, well before its next retry was due",
      4,
    );
  });

  it("prints with `patches apply -o yaml` what kubectl accepts, string values staying strings", async () => {
    const object = join(vc.dataDir, "yes.json");
    await writeFile(
      object,
      JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "flags", namespace: "default", annotations: { enabled: "yes", mode: "off" } },
        data: { on: "no", url: "x.default.svc" },
      }),
    );
    const settingsFile = join(vc.dataDir, "preview.yaml");
    await writeFile(settingsFile, SETTINGS);
    const preview = await runCli([
      "patches",
      "apply",
      "-f",
      settingsFile,
      "--resource",
      "configmaps",
      "--name",
      VC,
      "--namespace",
      HOST_NS,
      object,
    ]);
    assert.equal(preview.code, 0, preview.stderr);
    // What the host would store (a dry run: a real write of a managed-by object the virtual cluster lacks is the
    // syncer's to delete).
    const applied = JSON.parse(
      await hostctl.ok(["apply", "--dry-run=server", "-o", "json", "-f", "-"], preview.stdout),
    );
    assert.equal(applied?.metadata.annotations.enabled, "yes");
    assert.equal(applied?.metadata.annotations.mode, "off");
    assert.deepEqual(applied?.data, { on: "no", url: `${hostName("x")}.${HOST_NS}.svc` });
  });
});
