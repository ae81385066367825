import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withDefaults } from "./defaults.ts";
import type { PlatformConfig } from "./types.ts";

describe("withDefaults()", () => {
  it("withDefaults() fills the specification's defaults into present blocks only", () => {
    const config = withDefaults(
      {
        auth: {
          oidc: { issuerUrl: "https://i", clientId: "a" },
          idpA: {},
          idpB: {},
          saml: {},
          connectors: [{ id: "c", oidc: {} }],
        },
        audit: { enabled: false },
        uiSettings: { navBarButtons: [{ text: "Docs" }, { text: "Top", position: "TopStart" }] },
        secretStore: { enabled: true },
        costControl: { enabled: true },
      } as PlatformConfig,
      { VAULT_ADDR: "https://vault.example.com" },
      // biome-ignore lint/suspicious/noExplicitAny: assertions navigate the defaulted JSON freely
    ) as Record<string, any>;
    assert.equal(config.projectNamespacePrefix, "p-");
    assert.equal(config.auth.loginAccessKeyTTLSeconds, 1728000);
    assert.deepEqual(config.auth.oidc.scopes, ["email", "profile"]);
    assert.deepEqual(config.auth.connectors[0].oidc.scopes, ["email", "profile"]);
    assert.deepEqual(config.auth.idpA.scopes, ["profile", "email"]);
    assert.equal(config.auth.idpB.tenant, "common");
    assert.equal(config.auth.saml.nameIDPolicyFormat, "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    assert.equal(config.audit.maxSize, 100);
    assert.deepEqual(
      config.uiSettings.navBarButtons.map((b: { position: string }) => b.position),
      ["BottomEnd", "TopStart"],
    );
    assert.equal(config.secretStore.syncInterval, "1m");
    assert.equal(config.secretStore.address, "https://vault.example.com");
    assert.equal(config.costControl.global.metrics.retention, "1y");
    assert.equal(config.costControl.cluster.metrics.retention, "1y");
  });

  it("withDefaults() keeps explicit values, including a login TTL of 0", () => {
    const config = withDefaults(
      { projectNamespacePrefix: "proj-", auth: { loginAccessKeyTTLSeconds: 0 }, secretStore: { address: "https://v" } },
      { VAULT_ADDR: "https://other" },
    );
    assert.equal(config.projectNamespacePrefix, "proj-");
    assert.equal(config.auth?.loginAccessKeyTTLSeconds, 0);
    assert.equal(config.secretStore?.address, "https://v");
    assert.equal(config.audit, undefined);
    assert.equal(config.costControl, undefined);
  });
});
