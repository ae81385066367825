import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { desiredSlices } from "./endpointslice-mirroring.ts";

const endpoints = (subsets: unknown[]) =>
  ({ apiVersion: "v1", kind: "Endpoints", metadata: { name: "db", namespace: "default" }, subsets }) as never;

test("desiredSlices() makes one slice per address family and set of ports, ready first, each address once", () => {
  const { slices, skipped } = desiredSlices(
    endpoints([
      {
        addresses: [{ ip: "10.0.0.1", hostname: "a" }, { ip: "fd00::1" }],
        notReadyAddresses: [{ ip: "10.0.0.2" }, { ip: "10.0.0.1" }],
        ports: [{ name: "http", port: 80 }],
      },
      { addresses: [{ ip: "10.0.0.3" }], ports: [{ name: "http", port: 80 }] },
    ]),
  );
  assert.equal(skipped, 0);
  assert.deepEqual(
    slices.map((slice) => [slice.addressType, slice.endpoints.map((e) => [e.addresses[0], e.conditions?.ready])]),
    [
      [
        "IPv4",
        [
          ["10.0.0.1", true],
          ["10.0.0.2", false],
          ["10.0.0.3", true],
        ],
      ],
      ["IPv6", [["fd00::1", true]]],
    ],
  );
  assert.deepEqual(slices[0].ports, [{ name: "http", port: 80, protocol: "TCP" }]);
});

test("desiredSlices() mirrors at most 1000 addresses per subset and counts the rest", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 1300 }), { minLength: 1, maxLength: 3 }), (sizes) => {
      const subsets = sizes.map((size, s) => ({
        addresses: Array.from({ length: size }, (_, i) => ({ ip: `10.${s}.${i >> 8}.${i & 255}` })),
        ports: [{ port: 80 + s }],
      }));
      const { slices, skipped } = desiredSlices(endpoints(subsets));
      assert.equal(
        skipped,
        sizes.reduce((sum, size) => sum + Math.max(0, size - 1000), 0),
      );
      for (const slice of slices) assert.ok(slice.endpoints.length <= 1000);
      assert.equal(
        slices.reduce((sum, slice) => sum + slice.endpoints.length, 0),
        sizes.reduce((sum, size) => sum + Math.min(size, 1000), 0),
      );
    }),
    { numRuns: 30 },
  );
});
