import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { registrationAnnotations, registrationFromAnnotations, settingsSecretName } from "./stored-settings.ts";

describe("stored settings", () => {
  it("settingsSecretName() is vc-config-<name>", () => {
    assert.equal(settingsSecretName("dev"), "vc-config-dev");
  });

  it("registrationFromAnnotations() reads back what registrationAnnotations() wrote", () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(
        fc.record({
          platform: fc.webUrl(),
          project: label,
          instance: fc.record({ namespace: label, name: label }),
          createdInstance: fc.boolean(),
          accessKey: fc.option(label, { nil: undefined }),
        }),
        (registration) => {
          const read = registrationFromAnnotations(registrationAnnotations(registration));
          assert.deepEqual(read, { ...registration, instance: { ...registration.instance } });
        },
      ),
    );
  });

  it("registrationFromAnnotations() is undefined for objects without a registration", () => {
    assert.equal(registrationFromAnnotations(undefined), undefined);
    assert.equal(registrationFromAnnotations({ other: "x" }), undefined);
    assert.deepEqual(registrationAnnotations(undefined), {});
  });
});
