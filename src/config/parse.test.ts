// Validation tables for every block of the platform config: each bad value is a 422 cause at its field path
// inside spec.raw (with the YAML line), each good config parses clean.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfigText } from "./parse.ts";

interface BadCase {
  name: string;
  yaml: string;
  field: string;
  type?: string;
  detail?: RegExp;
  /** The problem is the whole text: no line to point at. */
  noLine?: boolean;
}

function problemsOf(yaml: string) {
  return parseConfigText(yaml, {}).errors;
}

function checkTable(block: string, cases: BadCase[]): void {
  describe(`parseConfigText() on ${block}`, () => {
    for (const c of cases) {
      it(`parseConfigText() reports ${c.name} at ${c.field}`, () => {
        const errors = problemsOf(c.yaml);
        const found = errors.find((e) => e.field === c.field);
        assert.ok(found, `no error at ${c.field}; got ${JSON.stringify(errors.map((e) => e.field))}`);
        if (c.type) assert.equal(found.type, c.type);
        if (c.detail) assert.match(found.detail ?? "", c.detail);
        if (!c.noLine) assert.match(found.detail ?? "", /\(line \d+(, column \d+)?\)$/);
      });
    }
  });
}

checkTable("the document", [
  { name: "a YAML syntax error", yaml: "auth: [1\n", field: "spec.raw", detail: /not valid YAML.*line 2/ },
  { name: "a duplicate key", yaml: "platformHost: a\nplatformHost: b\n", field: "spec.raw", detail: /unique/ },
  { name: "two documents", yaml: "a: 1\n---\nb: 2\n", field: "spec.raw", detail: /multiple documents/ },
  {
    name: "nesting past the bound",
    yaml: `audit:\n  policy: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`,
    field: "spec.raw",
    detail:
      /not valid YAML: nested too deeply: mappings and sequences may nest at most 100 levels \(line 2, column 109\)/,
  },
  { name: "a list instead of a mapping", yaml: "- a\n", field: "spec.raw", detail: /YAML mapping/, noLine: true },
  {
    name: "a wrong type at the top",
    yaml: "disableConfigEndpoint: yes-please\n",
    field: "spec.raw.disableConfigEndpoint",
    type: "FieldValueTypeInvalid",
  },
  {
    name: "a scheme in platformHost",
    yaml: "platformHost: https://p.example.com\n",
    field: "spec.raw.platformHost",
    detail: /without scheme/,
  },
  { name: "a path in platformHost", yaml: "platformHost: p.example.com/x\n", field: "spec.raw.platformHost" },
  {
    name: "an upper case namespace prefix",
    yaml: "projectNamespacePrefix: P-\n",
    field: "spec.raw.projectNamespacePrefix",
  },
  {
    name: "a too long namespace prefix",
    yaml: `projectNamespacePrefix: ${"a".repeat(33)}\n`,
    field: "spec.raw.projectNamespacePrefix",
  },
  {
    name: "__proto__ keys",
    yaml: "auth:\n  __proto__: {polluted: true}\n",
    field: "spec.raw.auth.__proto__",
    type: "FieldValueForbidden",
  },
]);

checkTable("auth", [
  {
    name: "a bad groups filter",
    yaml: "auth:\n  groupsFilters: ['^ok$', '(unclosed']\n",
    field: "spec.raw.auth.groupsFilters[1]",
    detail: /regular expression/,
  },
  {
    name: "a backreference (not RE2)",
    yaml: "auth:\n  groupsFilters: ['(a)\\1']\n",
    field: "spec.raw.auth.groupsFilters[0]",
    detail: /backreferences/,
  },
  {
    name: "a lookahead (not RE2)",
    yaml: "auth:\n  groupsFilters: ['a(?=b)']\n",
    field: "spec.raw.auth.groupsFilters[0]",
    detail: /lookahead/,
  },
  {
    name: "a negative max TTL",
    yaml: "auth:\n  accessKeyMaxTTLSeconds: -1\n",
    field: "spec.raw.auth.accessKeyMaxTTLSeconds",
  },
  {
    name: "a string login TTL",
    yaml: "auth:\n  loginAccessKeyTTLSeconds: 20d\n",
    field: "spec.raw.auth.loginAccessKeyTTLSeconds",
    type: "FieldValueTypeInvalid",
  },
  {
    name: "a bad header name",
    yaml: "auth:\n  customHttpHeaders:\n    'Bad Header': x\n",
    field: "spec.raw.auth.customHttpHeaders[Bad Header]",
  },
  {
    name: "a header value with a line break",
    yaml: 'auth:\n  customHttpHeaders:\n    X-A: "a\\r\\nSet-Cookie: x"\n',
    field: "spec.raw.auth.customHttpHeaders[X-A]",
  },
  {
    name: "a non-string header value",
    yaml: "auth:\n  customHttpHeaders:\n    X-A: [1]\n",
    field: "spec.raw.auth.customHttpHeaders[X-A]",
    type: "FieldValueTypeInvalid",
  },
  {
    name: "password.disabled not a boolean",
    yaml: "auth:\n  password: {disabled: 1}\n",
    field: "spec.raw.auth.password.disabled",
  },
  {
    name: "disableTeamCreation not a boolean",
    yaml: "auth:\n  disableTeamCreation: 'no'\n",
    field: "spec.raw.auth.disableTeamCreation",
  },
  {
    name: "disableUserCreation not a boolean",
    yaml: "auth:\n  disableUserCreation: 0\n",
    field: "spec.raw.auth.disableUserCreation",
  },
  {
    name: "an OIDC block without issuer",
    yaml: "auth:\n  oidc: {clientId: a}\n",
    field: "spec.raw.auth.oidc.issuerUrl",
    type: "FieldValueRequired",
  },
  {
    name: "an OIDC block without client id",
    yaml: "auth:\n  oidc: {issuerUrl: 'https://i'}\n",
    field: "spec.raw.auth.oidc.clientId",
    type: "FieldValueRequired",
  },
  {
    name: "a relative issuer URL",
    yaml: "auth:\n  oidc: {issuerUrl: idp.example.com, clientId: a}\n",
    field: "spec.raw.auth.oidc.issuerUrl",
    detail: /absolute/,
  },
  {
    name: "OIDC scopes not strings",
    yaml: "auth:\n  oidc: {issuerUrl: 'https://i', clientId: a, scopes: [1]}\n",
    field: "spec.raw.auth.oidc.scopes[0]",
  },
  {
    name: "a non-string client secret (its value not shown)",
    yaml: "auth:\n  oidc: {issuerUrl: 'https://i', clientId: a, clientSecret: 12345}\n",
    field: "spec.raw.auth.oidc.clientSecret",
    detail: /must be of type string: "integer"/,
  },
  {
    name: "codeHostA without client id",
    yaml: "auth:\n  codeHostA: {orgs: [{name: o}]}\n",
    field: "spec.raw.auth.codeHostA.clientId",
  },
  {
    name: "codeHostA orgs teams not a list",
    yaml: "auth:\n  codeHostA: {clientId: a, orgs: [{name: o, teams: t}]}\n",
    field: "spec.raw.auth.codeHostA.orgs[0].teams",
  },
  {
    name: "codeHostB relative base URL",
    yaml: "auth:\n  codeHostB: {clientId: a, baseURL: gitlab.local}\n",
    field: "spec.raw.auth.codeHostB.baseURL",
  },
  {
    name: "idpA service account without admin e-mail",
    yaml: "auth:\n  idpA: {clientId: a, serviceAccountFilePath: /sa.json}\n",
    field: "spec.raw.auth.idpA.adminEmail",
    type: "FieldValueRequired",
  },
  {
    name: "idpA hostedDomains not a list",
    yaml: "auth:\n  idpA: {clientId: a, hostedDomains: example.com}\n",
    field: "spec.raw.auth.idpA.hostedDomains",
  },
  {
    name: "idpB onlySecurityGroups not a boolean",
    yaml: "auth:\n  idpB: {clientId: a, onlySecurityGroups: sometimes}\n",
    field: "spec.raw.auth.idpB.onlySecurityGroups",
  },
  {
    name: "idpB groups with a shared tenant",
    yaml: "auth:\n  idpB: {clientId: a, groups: [admins]}\n",
    field: "spec.raw.auth.idpB.tenant",
    detail: /organisation tenant/,
  },
  {
    name: "idpB allowedTenants entry that is no tenant id",
    yaml: "auth:\n  idpB: {clientId: a, allowedTenants: [contoso.example.com]}\n",
    field: "spec.raw.auth.idpB.allowedTenants[0]",
    detail: /tenant id \(a GUID\)/,
  },
  {
    name: "idpB allowAllTenants together with allowedTenants",
    yaml: "auth:\n  idpB: {clientId: a, allowAllTenants: true, allowedTenants: [6f2b3c1e-0a4d-4e8b-9c11-2d3e4f5a6b7c]}\n",
    field: "spec.raw.auth.idpB.allowAllTenants",
    type: "FieldValueForbidden",
  },
  {
    name: "idpB allowAllTenants not a boolean",
    yaml: "auth:\n  idpB: {clientId: a, allowAllTenants: yes-please}\n",
    field: "spec.raw.auth.idpB.allowAllTenants",
  },
  {
    name: "SAML NameID format that is neither a URN nor a short form",
    yaml: "auth:\n  saml: {ssoURL: 'https://sso', insecureSkipSignatureValidation: true, nameIDPolicyFormat: shoeSize}\n",
    field: "spec.raw.auth.saml.nameIDPolicyFormat",
  },
  {
    name: "SAML without any trust anchor",
    yaml: "auth:\n  saml: {ssoURL: 'https://sso'}\n",
    field: "spec.raw.auth.saml.caData",
    detail: /one of caData, ca or insecureSkipSignatureValidation/,
  },
  {
    name: "SAML without SSO URL",
    yaml: "auth:\n  saml: {ca: /ca.pem}\n",
    field: "spec.raw.auth.saml.ssoURL",
    type: "FieldValueRequired",
  },
  {
    name: "SAML caData not base64",
    yaml: "auth:\n  saml: {ssoURL: 'https://sso', caData: '%%%'}\n",
    field: "spec.raw.auth.saml.caData",
    detail: /base64/,
  },
  {
    // Two whitespace quantifiers side by side made this quadratic: 7 s for 64,000 spaces.
    name: "SAML caData with a long run of whitespace before a bad byte",
    yaml: `auth:\n  saml: {ssoURL: 'https://sso', caData: 'a${" ".repeat(500_000)}!'}\n`,
    field: "spec.raw.auth.saml.caData",
    detail: /base64/,
  },
  {
    name: "a connector without id",
    yaml: "auth:\n  connectors:\n  - oidc: {issuerUrl: 'https://i', clientId: a}\n",
    field: "spec.raw.auth.connectors[0].id",
    type: "FieldValueRequired",
  },
  {
    name: "a connector id unfit for a URL",
    yaml: "auth:\n  connectors:\n  - id: 'my corp'\n    idpB: {clientId: a}\n",
    field: "spec.raw.auth.connectors[0].id",
  },
  {
    name: "a duplicate connector id",
    yaml: "auth:\n  connectors:\n  - {id: c, idpB: {clientId: a}}\n  - {id: c, idpB: {clientId: b}}\n",
    field: "spec.raw.auth.connectors[1].id",
    type: "FieldValueDuplicate",
  },
  {
    name: "a connector without provider",
    yaml: "auth:\n  connectors:\n  - {id: c, displayName: C}\n",
    field: "spec.raw.auth.connectors[0]",
    type: "FieldValueRequired",
  },
  {
    name: "a connector with two providers",
    yaml: "auth:\n  connectors:\n  - {id: c, idpA: {clientId: a}, idpB: {clientId: b}}\n",
    field: "spec.raw.auth.connectors[0]",
    type: "FieldValueForbidden",
  },
  {
    name: "a bad provider inside a connector",
    yaml: "auth:\n  connectors:\n  - {id: c, oidc: {clientId: a}}\n",
    field: "spec.raw.auth.connectors[0].oidc.issuerUrl",
  },
]);

checkTable("oidc (deprecated)", [
  {
    name: "a client without id",
    yaml: "oidc:\n  clients: [{name: a}]\n",
    field: "spec.raw.oidc.clients[0].clientId",
    type: "FieldValueRequired",
  },
  {
    name: "a duplicate client id",
    yaml: "oidc:\n  clients: [{clientId: a}, {clientId: a}]\n",
    field: "spec.raw.oidc.clients[1].clientId",
  },
  {
    name: "a wildcard redirect without wildcardRedirect",
    yaml: "oidc:\n  clients: [{clientId: a, redirectURIs: ['https://*.example.com']}]\n",
    field: "spec.raw.oidc.clients[0].redirectURIs[0]",
    detail: /wildcardRedirect/,
  },
  {
    name: "a relative redirect",
    yaml: "oidc:\n  clients: [{clientId: a, redirectURIs: [/callback]}]\n",
    field: "spec.raw.oidc.clients[0].redirectURIs[0]",
  },
  {
    name: "a redirect with a fragment",
    yaml: "oidc:\n  clients: [{clientId: a, redirectURIs: ['https://a.example.com/cb#x']}]\n",
    field: "spec.raw.oidc.clients[0].redirectURIs[0]",
    detail: /fragment/,
  },
  {
    name: "a wildcard port",
    yaml: "oidc:\n  wildcardRedirect: true\n  clients: [{clientId: a, redirectURIs: ['https://a.example.com:*/cb']}]\n",
    field: "spec.raw.oidc.clients[0].redirectURIs[0]",
  },
  {
    name: "a wildcard in another scheme",
    yaml: "oidc:\n  wildcardRedirect: true\n  clients: [{clientId: a, redirectURIs: ['myapp://*/cb']}]\n",
    field: "spec.raw.oidc.clients[0].redirectURIs[0]",
    detail: /http or https/,
  },
  { name: "enabled not a boolean", yaml: "oidc:\n  enabled: on-ish\n", field: "spec.raw.oidc.enabled" },
]);

checkTable("apps", [
  {
    name: "a repository without url",
    yaml: "apps:\n  repositories: [{name: r}]\n",
    field: "spec.raw.apps.repositories[0].url",
    type: "FieldValueRequired",
  },
  {
    name: "a relative repository url",
    yaml: "apps:\n  repositories: [{name: r, url: charts}]\n",
    field: "spec.raw.apps.repositories[0].url",
  },
  {
    name: "insecure not a boolean",
    yaml: "apps:\n  repositories: [{url: 'https://c', insecure: maybe}]\n",
    field: "spec.raw.apps.repositories[0].insecure",
  },
  {
    name: "a chart not in repo/chart form",
    yaml: "apps:\n  predefinedApps: [{chart: nginx}]\n",
    field: "spec.raw.apps.predefinedApps[0].chart",
    detail: /repo\/chart/,
  },
  {
    name: "a predefined app without chart",
    yaml: "apps:\n  predefinedApps: [{title: x}]\n",
    field: "spec.raw.apps.predefinedApps[0].chart",
  },
  {
    name: "clusters not a list",
    yaml: "apps:\n  predefinedApps: [{chart: a/b, clusters: one}]\n",
    field: "spec.raw.apps.predefinedApps[0].clusters",
  },
]);

checkTable("audit", [
  {
    name: "enabled without path",
    yaml: "audit:\n  enabled: true\n  level: 1\n",
    field: "spec.raw.audit.path",
    type: "FieldValueRequired",
  },
  {
    name: "level with policy",
    yaml: "audit:\n  level: 2\n  policy:\n    rules: [{level: Metadata}]\n",
    field: "spec.raw.audit.level",
    type: "FieldValueForbidden",
  },
  { name: "a level above 3", yaml: "audit:\n  level: 4\n", field: "spec.raw.audit.level" },
  {
    name: "a level by name",
    yaml: "audit:\n  level: Metadata\n",
    field: "spec.raw.audit.level",
    type: "FieldValueTypeInvalid",
  },
  {
    name: "a rule without level",
    yaml: "audit:\n  policy:\n    rules: [{verbs: [get]}]\n",
    field: "spec.raw.audit.policy.rules[0].level",
    type: "FieldValueRequired",
  },
  {
    name: "an unknown rule level",
    yaml: "audit:\n  policy:\n    rules: [{level: Everything}]\n",
    field: "spec.raw.audit.policy.rules[0].level",
    type: "FieldValueNotSupported",
  },
  {
    name: "an unknown stage",
    yaml: "audit:\n  policy:\n    omitStages: [Sometimes]\n",
    field: "spec.raw.audit.policy.omitStages[0]",
    type: "FieldValueNotSupported",
  },
  {
    name: "an unknown rule stage",
    yaml: "audit:\n  policy:\n    rules: [{level: None, omitStages: [Later]}]\n",
    field: "spec.raw.audit.policy.rules[0].omitStages[0]",
  },
  {
    name: "an unknown request target",
    yaml: "audit:\n  policy:\n    rules: [{level: None, requestTargets: [Moon]}]\n",
    field: "spec.raw.audit.policy.rules[0].requestTargets[0]",
  },
  {
    name: "resources and non-resource URLs together",
    yaml: "audit:\n  policy:\n    rules: [{level: None, resources: [{resources: [users]}], nonResourceURLs: [/version]}]\n",
    field: "spec.raw.audit.policy.rules[0].nonResourceURLs",
    type: "FieldValueForbidden",
  },
  {
    name: "a relative non-resource URL",
    yaml: "audit:\n  policy:\n    rules: [{level: None, nonResourceURLs: [version]}]\n",
    field: "spec.raw.audit.policy.rules[0].nonResourceURLs[0]",
  },
  {
    name: "a wildcard inside a non-resource URL",
    yaml: "audit:\n  policy:\n    rules: [{level: None, nonResourceURLs: ['/api/*/x']}]\n",
    field: "spec.raw.audit.policy.rules[0].nonResourceURLs[0]",
    detail: /final character/,
  },
  {
    name: "resourceNames without resources",
    yaml: "audit:\n  policy:\n    rules: [{level: None, resources: [{group: '', resourceNames: [a]}]}]\n",
    field: "spec.raw.audit.policy.rules[0].resources[0].resources",
    type: "FieldValueRequired",
  },
  {
    name: "a malformed resource",
    yaml: "audit:\n  policy:\n    rules: [{level: None, resources: [{resources: ['Users/**']}]}]\n",
    field: "spec.raw.audit.policy.rules[0].resources[0].resources[0]",
  },
  { name: "a negative maxSize", yaml: "audit:\n  maxSize: -5\n", field: "spec.raw.audit.maxSize" },
  {
    name: "maxAge as a duration",
    yaml: "audit:\n  maxAge: 7d\n",
    field: "spec.raw.audit.maxAge",
    type: "FieldValueTypeInvalid",
  },
  { name: "maxBackups negative", yaml: "audit:\n  maxBackups: -1\n", field: "spec.raw.audit.maxBackups" },
  { name: "compress not a boolean", yaml: "audit:\n  compress: gzip\n", field: "spec.raw.audit.compress" },
  {
    name: "a relative data store endpoint",
    yaml: "audit:\n  dataStoreEndpoint: store:9000\n",
    field: "spec.raw.audit.dataStoreEndpoint",
  },
  {
    name: "an http data store endpoint (PostgreSQL only)",
    yaml: "audit:\n  dataStoreEndpoint: https://store.example:9000\n",
    field: "spec.raw.audit.dataStoreEndpoint",
  },
  { name: "dataStoreTTL negative", yaml: "audit:\n  dataStoreTTL: -3\n", field: "spec.raw.audit.dataStoreTTL" },
]);

checkTable("uiSettings", [
  {
    name: "an unknown nav bar position",
    yaml: "uiSettings:\n  navBarButtons: [{position: Middle, text: Docs}]\n",
    field: "spec.raw.uiSettings.navBarButtons[0].position",
    type: "FieldValueNotSupported",
  },
  {
    name: "customCss not a list",
    yaml: "uiSettings:\n  customCss: https://a/b.css\n",
    field: "spec.raw.uiSettings.customCss",
  },
  {
    name: "externalURLs.block not a boolean",
    yaml: "uiSettings:\n  externalURLs: {block: sure}\n",
    field: "spec.raw.uiSettings.externalURLs.block",
  },
  {
    name: "a color that is a number",
    yaml: "uiSettings:\n  primaryColor: 123\n",
    field: "spec.raw.uiSettings.primaryColor",
  },
]);

checkTable("secretStore", [
  {
    name: "a sync interval in days",
    yaml: "secretStore:\n  syncInterval: 1d\n",
    field: "spec.raw.secretStore.syncInterval",
    detail: /Go duration/,
  },
  {
    name: "a zero sync interval",
    yaml: "secretStore:\n  syncInterval: 0s\n",
    field: "spec.raw.secretStore.syncInterval",
    detail: /positive/,
  },
  { name: "a relative address", yaml: "secretStore:\n  address: vault:8200\n", field: "spec.raw.secretStore.address" },
  {
    name: "a token secret ref without name",
    yaml: "secretStore:\n  auth:\n    tokenSecretRef: {key: token}\n",
    field: "spec.raw.secretStore.auth.tokenSecretRef.name",
    type: "FieldValueRequired",
  },
  {
    name: "a non-string token",
    yaml: "secretStore:\n  auth: {token: [a]}\n",
    field: "spec.raw.secretStore.auth.token",
  },
]);

checkTable("cloud", [
  {
    name: "an unknown weekday",
    yaml: "cloud:\n  maintenanceWindow: {dayOfWeek: Funday, timeWindow: '01:00-02:00'}\n",
    field: "spec.raw.cloud.maintenanceWindow.dayOfWeek",
  },
  {
    name: "a 12-hour time window",
    yaml: "cloud:\n  maintenanceWindow: {dayOfWeek: Monday, timeWindow: '1am-2am'}\n",
    field: "spec.raw.cloud.maintenanceWindow.timeWindow",
    detail: /HH:MM-HH:MM/,
  },
  {
    name: "an hour past 23",
    yaml: "cloud:\n  maintenanceWindow: {dayOfWeek: Monday, timeWindow: '22:00-24:30'}\n",
    field: "spec.raw.cloud.maintenanceWindow.timeWindow",
  },
  {
    name: "a window without day",
    yaml: "cloud:\n  maintenanceWindow: {timeWindow: '01:00-02:00'}\n",
    field: "spec.raw.cloud.maintenanceWindow.dayOfWeek",
    type: "FieldValueRequired",
  },
  {
    name: "a window without range",
    yaml: "cloud:\n  maintenanceWindow: {dayOfWeek: Monday}\n",
    field: "spec.raw.cloud.maintenanceWindow.timeWindow",
    type: "FieldValueRequired",
  },
]);

checkTable("costControl", [
  {
    name: "a retention in months",
    yaml: "costControl:\n  global:\n    metrics: {retention: 3mo}\n",
    field: "spec.raw.costControl.global.metrics.retention",
  },
  {
    name: "a zero retention",
    yaml: "costControl:\n  cluster:\n    metrics: {retention: 0d}\n",
    field: "spec.raw.costControl.cluster.metrics.retention",
  },
  {
    name: "a bad storage size",
    yaml: "costControl:\n  global:\n    metrics:\n      storage: {size: 10 gigs}\n",
    field: "spec.raw.costControl.global.metrics.storage.size",
  },
  {
    name: "a bad limit quantity",
    yaml: "costControl:\n  global:\n    metrics:\n      resources:\n        limits: {cpu: lots}\n",
    field: "spec.raw.costControl.global.metrics.resources.limits[cpu]",
  },
  {
    name: "a negative request",
    yaml: "costControl:\n  cluster:\n    metrics:\n      resources:\n        requests: {memory: -1Gi}\n",
    field: "spec.raw.costControl.cluster.metrics.resources.requests[memory]",
  },
  {
    name: "a claim without name",
    yaml: "costControl:\n  cluster:\n    costEstimator:\n      resources:\n        claims: [{request: gpu}]\n",
    field: "spec.raw.costControl.cluster.costEstimator.resources.claims[0].name",
    type: "FieldValueRequired",
  },
  {
    name: "negative replicas",
    yaml: "costControl:\n  cluster:\n    costEstimator: {replicas: -1}\n",
    field: "spec.raw.costControl.cluster.costEstimator.replicas",
  },
  {
    name: "two metrics replicas (one Prometheus process per scope)",
    yaml: "costControl:\n  global:\n    metrics: {replicas: 2}\n",
    field: "spec.raw.costControl.global.metrics.replicas",
    detail: /must be 0 or 1: 0 runs no Prometheus/,
  },
  {
    name: "two cost estimator replicas",
    yaml: "costControl:\n  cluster:\n    costEstimator: {replicas: 3}\n",
    field: "spec.raw.costControl.cluster.costEstimator.replicas",
    detail: /must be 0 or 1: 0 turns the cost estimate off/,
  },
  {
    name: "a storage class to provision",
    yaml: "costControl:\n  cluster:\n    metrics:\n      storage: {storageClass: fast-ssd}\n",
    field: "spec.raw.costControl.cluster.metrics.storage.storageClass",
    detail: /"-" or empty \(a temporary directory/,
  },
  {
    name: "a limit of a resource a process cannot have",
    yaml: "costControl:\n  global:\n    metrics:\n      resources:\n        limits: {ephemeral-storage: 1Gi}\n",
    field: "spec.raw.costControl.global.metrics.resources.limits[ephemeral-storage]",
    detail: /only cpu and memory/,
  },
  {
    name: "a request above its limit",
    yaml: "costControl:\n  global:\n    metrics:\n      resources:\n        limits: {memory: 1Gi}\n        requests: {memory: 2Gi}\n",
    field: "spec.raw.costControl.global.metrics.resources.requests[memory]",
    detail: /less than or equal to memory limit of 1Gi/,
  },
  {
    name: "a resource claim for the metrics",
    yaml: "costControl:\n  cluster:\n    metrics:\n      resources:\n        claims: [{name: gpu}]\n",
    field: "spec.raw.costControl.cluster.metrics.resources.claims",
    detail: /dynamic resource allocation/,
  },
  {
    name: "resources for the cost estimator (it is no process)",
    yaml: "costControl:\n  cluster:\n    costEstimator:\n      resources:\n        requests: {cpu: 1}\n",
    field: "spec.raw.costControl.cluster.costEstimator.resources",
    detail: /platform's API server/,
  },
  {
    name: "enabled not a boolean",
    yaml: "costControl:\n  enabled: yes please\n",
    field: "spec.raw.costControl.enabled",
  },
]);

const FULL_CONFIG = `
auth:
  oidc: {issuerUrl: "https://idp.example.com", clientId: platform, clientSecret: s1, groupsClaim: groups}
  codeHostA: {clientId: a, clientSecret: s2, orgs: [{name: org, teams: [dev]}]}
  codeHostB: {clientId: b, clientSecret: s3, baseURL: "https://gitlab.example.com", groups: [g]}
  idpA: {clientId: c, clientSecret: s4, hostedDomains: [example.com], serviceAccountFilePath: /sa.json, adminEmail: admin@example.com}
  idpB: {clientId: d, clientSecret: s5, tenant: organizations, allowedTenants: [6f2b3c1e-0a4d-4e8b-9c11-2d3e4f5a6b7c], onlySecurityGroups: true}
  saml: {ssoURL: "https://sso.example.com", caData: "TUlJQw==", usernameAttr: name, nameIDPolicyFormat: persistent}
  password: {disabled: true}
  connectors:
  - {id: corp-sso, displayName: Corp, oidc: {issuerUrl: "https://corp.example.com", clientId: x, clientSecret: s6}}
  disableTeamCreation: true
  disableUserCreation: true
  accessKeyMaxTTLSeconds: 2592000
  loginAccessKeyTTLSeconds: 0
  customHttpHeaders: {X-Frame-Options: DENY}
  groupsFilters: ["(?i)^team-", "^(?P<org>[a-z]+):admins$"]
apps:
  noDefault: true
  repositories: [{name: r, url: "oci://registry.example.com/charts", username: u, password: p}]
  predefinedApps: [{chart: r/nginx, initialVersion: 1.0.0, clusters: [c1], title: Nginx}]
audit:
  enabled: true
  path: /var/log/platform/audit.log
  policy:
    omitStages: [RequestReceived]
    rules:
    - {level: None, nonResourceURLs: ["/healthz*", "/version"]}
    - {level: RequestResponse, users: [admin], verbs: [create, patch], resources: [{group: management.platform.sh, resources: [users, "users/*", "*/status"], resourceNames: [alice]}]}
    - {level: Metadata, namespaces: [""], requestTargets: [Management]}
  maxAge: 7
  maxBackups: 3
  maxSize: 10
  compress: true
platformHost: platform.example.com:8443
projectNamespacePrefix: proj-
uiSettings:
  primaryColor: "#123456"
  navBarButtons: [{text: Docs, link: "https://docs.example.com"}, {position: TopStart, text: Home}]
  externalURLs: {block: true, allow: ["https://api.example.com"]}
secretStore: {enabled: true, auth: {token: t0k3n}, syncInterval: 1h30m}
disableConfigEndpoint: false
authenticateVersionEndpoint: true
cloud:
  releaseChannel: stable
  maintenanceWindow: {dayOfWeek: sunday, timeWindow: "23:00-01:00"}
costControl:
  enabled: true
  global:
    metrics: {replicas: 1, retention: 15d, storage: {storageClass: "-", size: 10Gi}, resources: {limits: {cpu: 500m, memory: 1Gi}, requests: {memory: 512Mi}}}
  cluster:
    metrics: {replicas: 0, storage: {storageClass: ""}}
    costEstimator: {replicas: 0}
`;

describe("parseConfigText() on valid configs", () => {
  it("parseConfigText() accepts a config using every block with no error and no warning", () => {
    const parsed = parseConfigText(FULL_CONFIG, {});
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.warnings, []);
    assert.equal(parsed.config.auth?.loginAccessKeyTTLSeconds, 0);
    assert.equal(parsed.config.secretStore?.syncInterval, "1h30m");
  });

  it("parseConfigText() accepts an empty text as the default config", () => {
    for (const text of ["", "   \n", "# only a comment\n", "{}"]) {
      const parsed = parseConfigText(text, {});
      assert.deepEqual(parsed.errors, [], text);
      assert.equal(parsed.config.projectNamespacePrefix, "p-");
    }
  });

  it("parseConfigText() warns about deprecated and unknown fields, and drops unknown ones from status", () => {
    const parsed = parseConfigText(
      "oidc: {enabled: true}\nworkspaceSubDomain: '*.ws.example.com'\nauth:\n  rancher: {host: r}\n",
      {},
    );
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.warnings.sort(), [
      "spec.raw.oidc: oidc is deprecated: its clients are still served at /oidc",
      "spec.raw.workspaceSubDomain: workspaceSubDomain is deprecated and no longer used",
      'unknown field "spec.raw.auth.rancher"',
    ]);
    assert.equal("rancher" in (parsed.config.auth ?? {}), false);
  });

  it("parseConfigText() warns about identity settings that refuse every login or let anyone in", () => {
    const warnings = (yaml: string) => parseConfigText(yaml, {}).warnings.join("\n");
    assert.match(warnings("auth:\n  idpB: {clientId: a}\n"), /idpB.tenant: "common" takes accounts of every tenant/);
    assert.match(
      warnings("auth:\n  idpB: {clientId: a, allowAllTenants: true}\n"),
      /idpB.allowAllTenants: lets people of any tenant log in/,
    );
    assert.equal(warnings("auth:\n  idpB: {clientId: a, tenant: corp.example.com}\n"), "");
    assert.match(
      warnings("auth:\n  saml: {ssoURL: 'https://sso', ca: /ca.pem, nameIDPolicyFormat: emailAddress}\n"),
      /only a persistent NameID identifies a person/,
    );
    assert.match(
      warnings("auth:\n  oidc: {issuerUrl: 'https://i', clientId: c, usernameClaim: email}\n"),
      /prefer sub/,
    );
  });

  it("parseConfigText() reports every problem at once, each on its line", () => {
    const parsed = parseConfigText(
      "platformHost: http://x\nauth:\n  groupsFilters: ['(']\n  accessKeyMaxTTLSeconds: -1\n",
      {},
    );
    const lines = parsed.errors.map((e) => `${e.field} ${/\(line (\d+)\)/.exec(e.detail ?? "")?.[1]}`).sort();
    assert.deepEqual(lines, [
      "spec.raw.auth.accessKeyMaxTTLSeconds 4",
      "spec.raw.auth.groupsFilters[0] 3",
      "spec.raw.platformHost 1",
    ]);
  });

  it("parseConfigText() never quotes the YAML source in a syntax error (it may hold secrets)", () => {
    const [error] = parseConfigText("auth:\n  oidc:\n    clientSecret: hunter2\n  - broken\n", {}).errors;
    assert.equal(error.field, "spec.raw");
    assert.doesNotMatch(error.detail ?? "", /hunter2/);
  });
});

describe("parseConfigText() and YAML anchors", () => {
  it("parseConfigText() refuses anchors and aliases, naming the line: an alias could copy a secret into a readable field", () => {
    for (const [raw, line] of [
      ["auth:\n  oidc:\n    clientSecret: &x S3cret\n    clientId: *x\n", 3],
      ["platformHost: p.example.com\nshared: &s {a: 1}\n", 2],
    ] as const) {
      const { errors } = parseConfigText(raw, {});
      assert.equal(errors.length, 1);
      assert.equal(errors[0].field, "spec.raw");
      assert.equal(errors[0].type, "FieldValueForbidden");
      assert.match(errors[0].detail ?? "", new RegExp(`anchors and aliases are not allowed .*\\(line ${line}\\)`));
      assert.doesNotMatch(JSON.stringify(errors), /S3cret/);
    }
  });
});
