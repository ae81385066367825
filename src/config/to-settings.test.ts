import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings } from "./settings.ts";
import { toPlatformSettings } from "./to-settings.ts";

describe("toPlatformSettings()", () => {
  it("toPlatformSettings() maps every live field the config sets", () => {
    const settings = toPlatformSettings(
      {
        auth: {
          accessKeyMaxTTLSeconds: 3600,
          loginAccessKeyTTLSeconds: 0,
          password: { disabled: true },
          customHttpHeaders: { "X-Frame-Options": "DENY" },
        },
        platformHost: "p.example.com",
        projectNamespacePrefix: "proj-",
        authenticateVersionEndpoint: true,
        audit: { enabled: true, path: "/var/log/a.log", level: 1 },
      },
      defaultSettings("127.0.0.1"),
    );
    assert.deepEqual(settings.auth, {
      accessKeyMaxTTLSeconds: 3600,
      loginAccessKeyTTLSeconds: 0,
      passwordLoginDisabled: true,
      customHttpHeaders: { "X-Frame-Options": "DENY" },
    });
    assert.equal(settings.platformHost, "p.example.com");
    assert.equal(settings.projectNamespacePrefix, "proj-");
    assert.equal(settings.authenticateVersionEndpoint, true);
    assert.deepEqual(settings.audit, { enabled: true, path: "/var/log/a.log", level: 1, maxSize: 100 });
  });

  it("toPlatformSettings() keeps the start flags' values for fields the config leaves unset", () => {
    const seed = defaultSettings("platform.local");
    seed.auth.accessKeyMaxTTLSeconds = 600;
    const settings = toPlatformSettings({}, seed);
    assert.equal(settings.auth.accessKeyMaxTTLSeconds, 600);
    assert.equal(settings.auth.loginAccessKeyTTLSeconds, 20 * 24 * 3600);
    assert.equal(settings.platformHost, "platform.local");
    assert.equal(settings.projectNamespacePrefix, "p-");
    assert.equal(settings.audit.enabled, false);
  });
});
