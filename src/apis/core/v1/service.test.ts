import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { testContext } from "../../../registry/testing.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { createServiceDefinition, type Service } from "./service.ts";
import { ServiceAddresses } from "./service-addresses.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const service = (name: string, spec: Service["spec"]): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "default" },
  spec,
});

describeResourceConformance({
  definition: createServiceDefinition(new ServiceAddresses()),
  sample: (name) => service(name, { selector: { app: "web" }, ports: [{ port: 80 }] }),
  changeSpec: (object) => {
    (object as Service).spec = { ...(object as Service).spec, selector: { app: "other" } };
  },
});

describe("Service", () => {
  let h: KindHarness;
  let addresses: ServiceAddresses;
  before(async () => {
    addresses = new ServiceAddresses({ serviceCidr: "10.96.0.0/24" });
    h = await kindHarness(createServiceDefinition(addresses));
  });
  after(() => h.close());

  it("create() defaults type, protocol, targetPort and allocates a cluster IP from the CIDR", async () => {
    const created = (await h.create(service("defaults", { ports: [{ port: 80 }] }))) as Service;
    const spec = created.spec ?? {};
    assert.equal(spec.type, "ClusterIP");
    assert.equal(spec.sessionAffinity, "None");
    assert.deepEqual(spec.ports, [{ port: 80, protocol: "TCP", targetPort: 80 }]);
    assert.match(spec.clusterIP ?? "", /^10\.96\.0\.\d+$/);
    assert.notEqual(spec.clusterIP, "10.96.0.1", "the first address is kept for the kubernetes service");
    assert.deepEqual(spec.clusterIPs, [spec.clusterIP]);
    assert.deepEqual(created.status, { loadBalancer: {} });
  });

  it("patch() with a strategic merge patch merges ports by port number, as kubectl apply expects", async () => {
    await h.create(
      service("smp", {
        ports: [
          { name: "http", port: 80 },
          { name: "metrics", port: 9090 },
        ],
      }),
    );
    const store = h.env.store(h.env.registry.stores()[0].definition as ResourceDefinition);
    const { object } = await store.patch(
      testContext(),
      { namespace: "default", name: "smp" },
      "strategic",
      {
        spec: {
          ports: [
            { port: 80, targetPort: 8080 },
            { port: 9090, $patch: "delete" },
          ],
        },
      },
      {},
    );
    assert.deepEqual((object as Service).spec?.ports, [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }]);
  });

  it("create() takes a requested cluster IP once; a taken or out-of-range one is refused", async () => {
    // 10.96.0.10 is in the /24's static band (offsets 1-16): services created before this one never got it.
    await h.create(service("fixed", { clusterIP: "10.96.0.10", ports: [{ port: 80 }] }));
    assert.deepEqual(await h.invalid(h.create(service("taken", { clusterIP: "10.96.0.10", ports: [{ port: 80 }] }))), [
      'spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    ]);
    assert.deepEqual(await h.invalid(h.create(service("outside", { clusterIP: "10.0.0.5", ports: [{ port: 80 }] }))), [
      'spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/24',
    ]);
  });

  it("a headless service (None) gets no address and may have no ports", async () => {
    const created = (await h.create(service("headless", { clusterIP: "None", selector: { app: "db" } }))) as Service;
    assert.equal(created.spec?.clusterIP, "None");
  });

  it("ExternalName needs externalName and gets no cluster IP", async () => {
    const created = (await h.create(
      service("alias", { type: "ExternalName", externalName: "db.example.com" }),
    )) as Service;
    assert.equal(created.spec?.clusterIP, undefined);
    assert.deepEqual(await h.invalid(h.create(service("no-name", { type: "ExternalName" }))), [
      "spec.externalName: Required value",
    ]);
  });

  it("NodePort and LoadBalancer get node ports; a ClusterIP service may not set one", async () => {
    const created = (await h.create(
      service("np", {
        type: "NodePort",
        ports: [
          { name: "a", port: 80 },
          { name: "b", port: 81, nodePort: 30081 },
        ],
      }),
    )) as Service;
    const [a, b] = created.spec?.ports ?? [];
    assert.ok((a.nodePort ?? 0) >= 30000 && (a.nodePort ?? 0) <= 32767);
    assert.equal(b.nodePort, 30081);
    assert.equal(created.spec?.externalTrafficPolicy, "Cluster");
    assert.deepEqual(
      await h.invalid(h.create(service("np2", { type: "NodePort", ports: [{ port: 80, nodePort: 30081 }] }))),
      ["spec.ports[0].nodePort: Invalid value: 30081: provided port is already allocated"],
    );
    assert.deepEqual(await h.invalid(h.create(service("cip", { ports: [{ port: 80, nodePort: 30090 }] }))), [
      "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ]);
    const lb = (await h.create(service("lb", { type: "LoadBalancer", ports: [{ port: 443 }] }))) as Service;
    assert.equal(lb.spec?.allocateLoadBalancerNodePorts, true);
    assert.ok(lb.spec?.ports?.[0].nodePort);
  });

  it("create() reports port problems with upstream's field paths and messages", async () => {
    const errors = await h.invalid(
      h.create(
        service("Bad-Name", {
          ports: [
            { port: 0, protocol: "HTTP" },
            { name: "x", port: 70000, targetPort: "Not_A_Name" },
          ],
          sessionAffinity: "Sticky",
        }),
      ),
    );
    assert.deepEqual(errors, [
      "metadata.name: Invalid value: \"Bad-Name\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.ports[0].name: Required value",
      "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
      'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
      "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
      'spec.ports[1].targetPort: Invalid value: "Not_A_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
    ]);
  });

  it("create() refuses duplicate port names and a missing port list", async () => {
    assert.deepEqual(
      await h.invalid(
        h.create(
          service("dup", {
            ports: [
              { name: "web", port: 80 },
              { name: "web", port: 81 },
            ],
          }),
        ),
      ),
      ['spec.ports[1].name: Duplicate value: "web"'],
    );
    assert.deepEqual(await h.invalid(h.create(service("none", { selector: { app: "x" } }))), [
      "spec.ports: Required value",
    ]);
  });

  it("update() keeps the cluster IP a PUT leaves out, and refuses to change it", async () => {
    const created = (await h.create(service("stable", { ports: [{ port: 80 }] }))) as Service;
    const ip = created.spec?.clusterIP;
    const omitted = structuredClone(created);
    delete omitted.spec?.clusterIP;
    delete omitted.spec?.clusterIPs;
    const updated = (await h.update(omitted)) as Service;
    assert.equal(updated.spec?.clusterIP, ip);
    const changed = structuredClone(updated);
    if (changed.spec) {
      changed.spec.clusterIP = "10.96.0.99";
      changed.spec.clusterIPs = ["10.96.0.99"];
    }
    assert.deepEqual(await h.invalid(h.update(changed)), [
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set',
    ]);
  });

  it("update() to ExternalName drops the cluster IP, and back to ClusterIP allocates one", async () => {
    const created = (await h.create(service("switch", { ports: [{ port: 80 }] }))) as Service;
    const external = structuredClone(created);
    if (external.spec) {
      external.spec.type = "ExternalName";
      external.spec.externalName = "example.com";
    }
    const renamed = (await h.update(external)) as Service;
    assert.equal(renamed.spec?.clusterIP, undefined);
    const back = structuredClone(renamed);
    if (back.spec) {
      back.spec.type = "ClusterIP";
      delete back.spec.externalName;
    }
    const again = (await h.update(back)) as Service;
    assert.match(again.spec?.clusterIP ?? "", /^10\.96\.0\.\d+$/);
  });
});

describe("ServiceAddresses", () => {
  it("allocateClusterIP() hands out each address once until the stored service holding it is removed", () => {
    const addresses = new ServiceAddresses({ serviceCidr: "10.0.0.0/29", reservationMs: 60_000 });
    // /29: 8 addresses, minus network, first (kubernetes) and broadcast = 5 allocatable.
    const taken = new Set(Array.from({ length: 5 }, () => addresses.allocateClusterIP()));
    assert.equal(taken.size, 5);
    assert.throws(() => addresses.allocateClusterIP(), /range is full/);
    // The service holding it is stored (its reservation ends), then deleted: that address is free again.
    addresses.set("/core/services/a/x", service("x", { clusterIP: "10.0.0.2" }));
    assert.throws(() => addresses.allocateClusterIP(), /range is full/);
    addresses.remove("/core/services/a/x");
    assert.equal(addresses.allocateClusterIP(), "10.0.0.2");
  });

  it("a reservation that never reached storage expires", () => {
    let now = 0;
    const addresses = new ServiceAddresses({ serviceCidr: "10.0.0.0/29", reservationMs: 1000, now: () => now });
    addresses.allocateClusterIP("10.0.0.3");
    assert.throws(() => addresses.allocateClusterIP("10.0.0.3"), /already allocated/);
    now = 2000;
    assert.equal(addresses.allocateClusterIP("10.0.0.3"), "10.0.0.3");
  });

  it("a stored service holds its address until it is removed", () => {
    let now = 0;
    const addresses = new ServiceAddresses({ serviceCidr: "10.0.0.0/29", reservationMs: 1, now: () => now });
    addresses.set("/core/services/a/x", service("x", { clusterIP: "10.0.0.4", ports: [{ port: 1, nodePort: 30001 }] }));
    now = 10;
    assert.throws(() => addresses.allocateClusterIP("10.0.0.4"), /already allocated/);
    assert.throws(() => addresses.allocateNodePort(30001), /already allocated/);
    addresses.remove("/core/services/a/x");
    assert.equal(addresses.allocateClusterIP("10.0.0.4"), "10.0.0.4");
    assert.equal(addresses.allocateNodePort(30001), 30001);
  });

  it("allocateClusterIP() and allocateNodePort() hand out the lower band (kept for requests) only once the upper is full", () => {
    // /27: 32 addresses, static band of 16 (offsets 1-16); node ports 30000-30099: band of 16 (30000-30015).
    const addresses = new ServiceAddresses({ serviceCidr: "10.0.0.0/27", nodePorts: { min: 30000, max: 30099 } });
    const offsets = Array.from({ length: 29 }, () => Number(addresses.allocateClusterIP().split(".")[3]));
    assert.ok(
      offsets.slice(0, 14).every((offset) => offset >= 17 && offset <= 30),
      `upper band first: ${offsets}`,
    );
    assert.ok(
      offsets.slice(14).every((offset) => offset >= 2 && offset <= 16),
      `then the lower: ${offsets}`,
    );
    const ports = Array.from({ length: 100 }, () => addresses.allocateNodePort());
    assert.ok(
      ports.slice(0, 84).every((port) => port >= 30016),
      "upper band first",
    );
    assert.ok(
      ports.slice(84).every((port) => port < 30016),
      "then the lower",
    );
  });
});
