import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { type KindHarness, kindHarness } from "../../core/v1/testing.ts";
import { type EndpointSlice, endpointSliceDefinition, validateEndpointSlice } from "./endpointslice.ts";

const slice = (name: string, fields: Partial<EndpointSlice> = {}): EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace: "default" },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.0.0.1"] }],
  ports: [{ name: "http", port: 80 }],
  ...fields,
});

describeResourceConformance({
  definition: endpointSliceDefinition,
  sample: (name) => slice(name),
  changeSpec: (object) => {
    (object as EndpointSlice).endpoints = [{ addresses: ["10.0.0.2"] }];
  },
});

describe("EndpointSlice", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(endpointSliceDefinition);
  });
  after(() => h.close());

  it("create() defaults port names and protocols as the v1 API does", async () => {
    const created = (await h.create(
      slice("defaults", { ports: [{ port: 53, protocol: "UDP" }, { name: "b" }] }),
    )) as EndpointSlice;
    assert.deepEqual(created.ports, [
      { name: "", port: 53, protocol: "UDP" },
      { name: "b", protocol: "TCP" },
    ]);
  });

  it("create() refuses addresses of another type, empty and too many endpoints, and bad ports", async () => {
    const errors = await h.invalid(
      h.create(
        slice("bad", {
          addressType: "IPv6",
          endpoints: [{ addresses: ["10.0.0.1"], hostname: "Not_A_Label" }, { addresses: [] }],
          ports: [
            { name: "a", port: 0 },
            { name: "a", port: 80, protocol: "HTTP" },
          ],
        }),
      ),
    );
    assert.deepEqual(errors, [
      'endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address',
      "endpoints[0].hostname: Invalid value: \"Not_A_Label\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      "endpoints[1].addresses: Required value: must contain at least 1 address",
      "ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
      'ports[1].name: Duplicate value: "a"',
      'ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ]);
    const many = Array.from({ length: 1001 }, (_, i) => ({ addresses: [`10.0.${i >> 8}.${i & 255}`] }));
    assert.deepEqual(await h.invalid(h.create(slice("many", { endpoints: many }))), [
      "endpoints: Too many: 1001: must have at most 1000 items",
    ]);
  });

  it("update() keeps the address type immutable", async () => {
    const created = await h.create(slice("fixed"));
    const errors = await h.invalid(
      h.update({ ...created, addressType: "IPv6", endpoints: [{ addresses: ["fd00::1"] }] } as EndpointSlice),
    );
    assert.deepEqual(errors, ['addressType: Invalid value: "IPv6": field is immutable']);
  });

  it("validateEndpointSlice() accepts every well-formed IPv4 slice", () => {
    const ipv4 = fc.tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 }));
    fc.assert(
      fc.property(fc.array(ipv4, { minLength: 1, maxLength: 20 }), fc.boolean(), (ips, ready) => {
        const endpoints = ips.map((parts) => ({ addresses: [parts.join(".")], conditions: { ready } }));
        const ports = [{ name: "http", port: 80, protocol: "TCP" }];
        assert.deepEqual(validateEndpointSlice(slice("x", { endpoints, ports })), []);
      }),
    );
  });
});
