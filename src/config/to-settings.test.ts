import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings } from "./settings.ts";
import { connectorsOf, oidcProviderSettingsOf, toPlatformSettings } from "./to-settings.ts";

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
      sso: { connectors: [], disableTeamCreation: false, disableUserCreation: false, groupsFilters: [] },
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

describe("connectorsOf()", () => {
  it("connectorsOf() makes each built-in block a connector named by its block, then each auth.connectors item", () => {
    const connectors = connectorsOf({
      saml: { ssoURL: "https://idp.example.com/sso" },
      oidc: { issuerUrl: "https://idp.example.com", clientId: "c", type: "Corporate SSO" },
      connectors: [
        { id: "gh", displayName: "Code host", codeHostA: { clientId: "a" } },
        { id: "oidc", oidc: { issuerUrl: "https://dup.example.com", clientId: "d" } },
        { id: "nothing" },
      ],
    });
    assert.deepEqual(
      connectors.map(({ id, displayName, kind }) => ({ id, displayName, kind })),
      [
        { id: "oidc", displayName: "Corporate SSO", kind: "oidc" },
        { id: "saml", displayName: "SAML", kind: "saml" },
        { id: "gh", displayName: "Code host", kind: "codeHostA" },
      ],
    );
    assert.deepEqual(connectors[2].config, { clientId: "a" });
  });

  it("toPlatformSettings() carries the SSO switches and filters", () => {
    const settings = toPlatformSettings(
      { auth: { disableTeamCreation: true, disableUserCreation: true, groupsFilters: ["^dev"] } },
      defaultSettings(),
    );
    assert.deepEqual(settings.auth.sso, {
      connectors: [],
      disableTeamCreation: true,
      disableUserCreation: true,
      groupsFilters: ["^dev"],
    });
  });
});

describe("oidcProviderSettingsOf()", () => {
  it("oidcProviderSettingsOf() keeps the provider on by default and lists the clients that have an id", () => {
    assert.deepEqual(oidcProviderSettingsOf(undefined), { enabled: true, wildcardRedirect: false, clients: [] });
    assert.deepEqual(
      oidcProviderSettingsOf({
        enabled: false,
        wildcardRedirect: true,
        clients: [
          { name: "Grafana", clientId: "grafana", clientSecret: "s", redirectURIs: ["https://g/cb", 3] },
          { name: "no id" },
          { clientId: "cli" },
        ],
      }),
      {
        enabled: false,
        wildcardRedirect: true,
        clients: [
          { name: "Grafana", clientId: "grafana", clientSecret: "s", redirectURIs: ["https://g/cb"] },
          { name: "", clientId: "cli", clientSecret: "", redirectURIs: [] },
        ],
      },
    );
  });

  it("toPlatformSettings() takes status.oidc when the config has it and the seed's otherwise", () => {
    const seed = defaultSettings();
    assert.deepEqual(toPlatformSettings({}, seed).oidc, seed.oidc);
    assert.equal(toPlatformSettings({ oidc: { enabled: false } }, seed).oidc.enabled, false);
  });

  it("toPlatformSettings() maps costControl's replicas, resources and storage class for the Prometheus runner", () => {
    const { costControl } = toPlatformSettings(
      {
        costControl: {
          enabled: true,
          global: {
            metrics: {
              replicas: 0,
              storage: { storageClass: "" },
              resources: { limits: { memory: "512Mi", cpu: 1.5 }, requests: { memory: "256Mi", cpu: "500m" } },
            },
          },
          cluster: { metrics: { storage: { storageClass: "-" } }, costEstimator: { replicas: 0 } },
        },
      },
      defaultSettings(),
    );
    assert.equal(costControl.global.replicas, 0);
    assert.equal(costControl.global.storageClass, "", "empty is kept: it means no persistent storage, unlike unset");
    assert.equal(costControl.global.memoryLimit, "512Mi");
    assert.equal(costControl.global.cpuLimit, "1.5");
    assert.equal(costControl.global.memoryRequest, "256Mi");
    assert.equal(costControl.global.cpuRequest, "500m");
    assert.equal(costControl.cluster.storageClass, "-");
    assert.equal(costControl.cluster.replicas, 1);
    assert.equal(costControl.costEstimatorReplicas, 0);
  });

  it("toPlatformSettings() maps the Config's systems with their defaults, and an absent block switches one off", () => {
    const off = toPlatformSettings({}, defaultSettings());
    assert.equal(off.costControl.enabled, false);
    assert.equal(off.secretStore.enabled, false);
    assert.deepEqual(off.apps.repositories, []);
    assert.equal(off.cloud.maintenanceWindow, undefined);
    const on = toPlatformSettings(
      {
        costControl: { enabled: true, global: { metrics: { storage: { size: "5Gi" } } }, prices: { cpuCoreHour: 1 } },
        secretStore: { enabled: true, address: "https://vault:8200", auth: { tokenSecretRef: { name: "vault" } } },
        apps: { repositories: [{ name: "r", url: "https://charts" }], predefinedApps: [{ chart: "r/nginx" }] },
        cloud: { releaseChannel: "stable", maintenanceWindow: { dayOfWeek: "Tuesday", timeWindow: "01:30-03:00" } },
      },
      defaultSettings(),
    );
    assert.deepEqual(on.costControl.global, {
      replicas: 1,
      retention: "1y",
      storageSize: "5Gi",
      scrapeInterval: "30s",
      memoryLimit: "",
      cpuLimit: "",
      memoryRequest: "",
      cpuRequest: "",
    });
    assert.equal(on.costControl.costEstimatorReplicas, 1);
    assert.deepEqual(on.costControl.prices, {
      currency: "USD",
      cpuCoreHour: 1,
      memoryGiBHour: 0.004,
      storageGiBMonth: 0.1,
      millionApiRequests: 0,
    });
    assert.equal(on.secretStore.syncIntervalMs, 60_000);
    assert.deepEqual(on.secretStore.tokenSecretRef, { name: "vault", key: "token", optional: false });
    assert.equal(on.secretStore.mount, "secret");
    assert.equal(on.apps.refreshIntervalMs, 600_000);
    assert.equal(on.apps.predefinedApps[0].title, "nginx");
    assert.deepEqual(on.cloud, {
      releaseChannel: "stable",
      maintenanceWindow: { dayOfWeek: 2, startMinute: 90, endMinute: 180 },
    });
  });
});
