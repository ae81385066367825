import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultSettings, withDefaults } from "./defaults.ts";

test("defaultSettings() turns on endpoint, service and secret syncing with no patches", () => {
  assert.deepEqual(defaultSettings(), {
    sync: {
      toHost: {
        endpoints: { enabled: true, patches: [] },
        services: { enabled: true, patches: [] },
        endpointSlices: { enabled: true, patches: [] },
        configMaps: { enabled: true, all: false, patches: [] },
        secrets: { enabled: true, all: false, patches: [] },
        namespaces: { enabled: false },
      },
    },
    controlPlane: { apiServer: {} },
    external: {},
    experimental: { multiNamespaceMode: { enabled: false } },
  });
});

test("withDefaults() keeps user values and fills in the rest", () => {
  const { settings, problems } = withDefaults({
    sync: { toHost: { endpoints: { patches: [{ path: "a", expression: "value" }] } } },
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(settings.sync.toHost.endpoints, { enabled: true, patches: [{ path: "a", expression: "value" }] });
});

test("withDefaults() distinguishes no platform, dedicated keys and a shared key", () => {
  assert.equal(withDefaults({}).settings.external.platform, undefined);
  assert.deepEqual(withDefaults({ external: { platform: {} } }).settings.external.platform, {});
  assert.deepEqual(withDefaults({ external: { platform: { apiKey: {} } } }).settings.external.platform, {
    apiKey: { secretName: "virtualcluster-platform-api-key", createRBAC: true },
  });
  assert.deepEqual(
    withDefaults({ external: { platform: { apiKey: { createRBAC: false } } } }, { namespace: "vc-ns" }).settings
      .external.platform?.apiKey,
    { secretName: "virtualcluster-platform-api-key", namespace: "vc-ns", createRBAC: false },
  );
});

test("withDefaults() reports unknown keys and bad values with their field paths", () => {
  const { problems } = withDefaults({
    sync: { toHost: { endpoints: { enabled: "yes", patches: [{ path: 1, expresion: "value" }] }, pods: {} } },
    external: { platform: { apiKey: { createRBAC: "no" } } },
    extra: true,
  });
  assert.deepEqual(problems, [
    "extra: Forbidden: unknown field; known fields: sync, controlPlane, external, experimental, audit",
    "sync.toHost.pods: Forbidden: unknown field; known fields: endpoints, services, endpointSlices, configMaps, secrets, namespaces",
    'sync.toHost.endpoints.enabled: Invalid value: "yes": must be a boolean',
    "sync.toHost.endpoints.patches[0].expresion: Forbidden: unknown field; known fields: path, expression, reverseExpression, reference, labels",
    "sync.toHost.endpoints.patches[0].path: Invalid value: 1: must be a string",
    'external.platform.apiKey.createRBAC: Invalid value: "no": must be a boolean',
  ]);
});

test("withDefaults() requires endpoint syncing for service syncing", () => {
  assert.deepEqual(withDefaults({ sync: { toHost: { endpoints: { enabled: false } } } }).problems, [
    "sync.toHost.services.enabled: Invalid value: true: service syncing requires sync.toHost.endpoints.enabled",
  ]);
  assert.deepEqual(
    withDefaults({ sync: { toHost: { endpoints: { enabled: false }, services: { enabled: false } } } }).problems,
    [],
  );
});

test("withDefaults() keeps __proto__ keys as data", () => {
  const raw = JSON.parse('{"sync": {"__proto__": {"polluted": 1}}}');
  const { problems, settings } = withDefaults(raw);
  assert.match(problems[0], /^sync.__proto__: Forbidden: unknown field/);
  assert.equal(Object.getPrototypeOf(settings.sync), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("withDefaults() takes OIDC authentication with an https issuer and a client id, the user name from sub by default", () => {
  const oidc = (block: Record<string, unknown>) => withDefaults({ controlPlane: { apiServer: { oidc: block } } });
  const valid = oidc({ issuerURL: "https://platform.example.com/oidc", clientID: "kubernetes", groupsClaim: "groups" });
  assert.deepEqual(valid.problems, []);
  assert.deepEqual(valid.settings.controlPlane.apiServer.oidc, {
    issuerURL: "https://platform.example.com/oidc",
    clientID: "kubernetes",
    usernameClaim: "sub",
    groupsClaim: "groups",
  });
  assert.deepEqual(oidc({}).problems, [
    "controlPlane.apiServer.oidc.issuerURL: Required value: the issuer of the ID tokens",
    "controlPlane.apiServer.oidc.clientID: Required value: the audience the ID tokens must name",
  ]);
  assert.deepEqual(oidc({ issuerURL: "http://platform.example.com/oidc", clientID: "k" }).problems, [
    'controlPlane.apiServer.oidc.issuerURL: Invalid value: "http://platform.example.com/oidc": must be an https address without query',
  ]);
});
