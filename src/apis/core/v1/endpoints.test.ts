import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { type Endpoints, endpointsCell, endpointsDefinition } from "./endpoints.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const definition = endpointsDefinition;
const endpoints = (name: string, subsets: Endpoints["subsets"]): Endpoints => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: { name, namespace: "default" },
  subsets,
});

describeResourceConformance({
  definition,
  sample: (name) => endpoints(name, [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }]),
  changeSpec: (object) => {
    (object as Endpoints).subsets = [{ addresses: [{ ip: "10.0.0.2" }], ports: [{ port: 80 }] }];
  },
});

describe("Endpoints", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(definition);
  });
  after(() => h.close());

  it("create() keeps addresses, notReadyAddresses and targetRefs and defaults the protocol", async () => {
    const created = (await h.create(
      endpoints("keep", [
        {
          addresses: [{ ip: "10.0.0.1", targetRef: { kind: "Pod", name: "web-1", namespace: "default", uid: "u1" } }],
          notReadyAddresses: [{ ip: "fd00::2", hostname: "web-2" }],
          ports: [{ name: "http", port: 80 }],
        },
      ]),
    )) as Endpoints;
    const [subset] = created.subsets ?? [];
    assert.equal(subset.addresses?.[0].targetRef?.name, "web-1");
    assert.equal(subset.notReadyAddresses?.[0].ip, "fd00::2");
    assert.deepEqual(subset.ports, [{ name: "http", port: 80, protocol: "TCP" }]);
  });

  it("create() refuses bad addresses and ports with their field paths", async () => {
    const errors = await h.invalid(
      h.create(
        endpoints("bad", [
          {
            addresses: [{ ip: "10.0.0" }, { ip: "0.0.0.0" }],
            ports: [{ port: 0 }, { name: "b", port: 8, protocol: "ICMP" }],
          },
          { ports: [{ port: 80 }] },
        ]),
      ),
    );
    assert.deepEqual(errors, [
      'subsets[0].addresses[0].ip: Invalid value: "10.0.0": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'subsets[0].addresses[1].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      "subsets[0].ports[0].name: Required value",
      "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
      'subsets[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      "subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`",
    ]);
  });

  it("endpointsCell() shows three addresses and how many more, as kubectl does", () => {
    const many = endpoints("many", [
      { addresses: ["1", "2", "3", "4"].map((n) => ({ ip: `10.0.0.${n}` })), ports: [{ port: 80 }] },
    ]);
    assert.equal(endpointsCell(many), "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more...");
    assert.equal(endpointsCell(endpoints("none", undefined)), "<none>");
  });
});
