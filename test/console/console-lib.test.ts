// The console's pure helpers, run under Node: return paths (no open redirects), the Config's errors placed at
// lines, relative dates, permissions from a rules review, health read from /readyz and /metrics, audit events
// folded into requests, key scopes as labels, required fields.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { type AuditEventObject, groupRequests, isConsoleAsset } from "../../console/src/lib/audit-events.ts";
import { fetchWaitingOutBusy } from "../../console/src/lib/busy-retry.ts";
import { configLineErrors } from "../../console/src/lib/config-errors.ts";
import { missing } from "../../console/src/lib/field-errors.ts";
import { parseMetrics, parseReadyz } from "../../console/src/lib/health.ts";
import { helmInstallCommand, shellWord } from "../../console/src/lib/helm-command.ts";
import { scopeLabels } from "../../console/src/lib/key-scope.ts";
import { permissionsOf } from "../../console/src/lib/permissions.ts";
import { loginPath, safeReturnPath } from "../../console/src/lib/return-path.ts";
import { relativeTime, withinDays } from "../../console/src/lib/time.ts";
import { openRedirectPayloads } from "../../src/utils/testing-open-redirects.ts";

describe("console helpers", () => {
  it("safeReturnPath() keeps paths of this platform and refuses every other destination", () => {
    assert.equal(safeReturnPath("/users"), "/users");
    assert.equal(safeReturnPath("/oidc/auth?client_id=x&state=y#z"), "/oidc/auth?client_id=x&state=y#z");
    for (const bad of [
      "//evil.example.com/x",
      "/\\evil.example.com",
      "https://evil.example.com/",
      "javascript:alert(1)",
      "users",
      "/login?return=/x",
      "/a\nb",
      "/.//evil.example.com",
      "",
      null,
    ]) {
      assert.equal(safeReturnPath(bad), undefined, String(bad));
    }
    assert.equal(loginPath("/teams"), "/login?return=%2Fteams");
    assert.equal(loginPath("/"), "/login");
  });

  it("safeReturnPath() refuses every known open-redirect payload or keeps it on the platform", () => {
    for (const payload of openRedirectPayloads()) {
      const target = safeReturnPath(payload);
      if (target === undefined) continue;
      const landed = new URL(target, "https://platform.example.com");
      assert.equal(landed.origin, "https://platform.example.com", payload);
      assert.ok(!target.startsWith("//") && !decodeURIComponent(target).startsWith("//"), payload);
    }
  });

  it("configLineErrors() reads the line of each cause and sorts by it", () => {
    const errors = configLineErrors({
      message: "Config is invalid",
      details: {
        causes: [
          { field: "spec.raw.auth.groupsFilters[1]", message: 'Invalid value: "(": bad regexp (line 7)' },
          { field: "spec.raw", message: "bad YAML (line 2, column 3)" },
          { field: "spec.raw.audit", message: "no line here" },
        ],
      },
    });
    assert.deepEqual(
      errors.map((e) => e.line),
      [2, 7, undefined],
    );
    assert.deepEqual(configLineErrors({ message: "forbidden" }), [{ field: "", message: "forbidden" }]);
  });

  it("relativeTime() words a time relative to now", () => {
    const now = Date.parse("2026-11-25T12:00:00Z");
    assert.equal(relativeTime("2026-11-25T11:57:00Z", now), "3 minutes ago");
    assert.equal(relativeTime("2026-11-27T12:00:00Z", now), "in 2 days");
    assert.equal(relativeTime("2026-11-25T11:59:58Z", now), "just now");
    assert.equal(relativeTime("not a time", now), "not a time");
  });

  it("relativeTime() says a key made a moment ago that lasts 7 days ends in 7 days, not 6 or next week", () => {
    const now = Date.parse("2026-11-25T12:00:00Z");
    const sevenDays = new Date(now - 3000 + 7 * 86_400_000).toISOString();
    assert.equal(relativeTime(sevenDays, now), "in 7 days");
    assert.equal(relativeTime(new Date(now + 20 * 86_400_000).toISOString(), now), "in 20 days");
    assert.equal(relativeTime(new Date(now + 90 * 86_400_000).toISOString(), now), "in 3 months");
    assert.equal(relativeTime(new Date(now - 59 * 60_000).toISOString(), now), "1 hour ago");
    assert.equal(withinDays(sevenDays, 7, now), true);
    assert.equal(withinDays(new Date(now + 8 * 86_400_000).toISOString(), 7, now), false);
    assert.equal(withinDays(new Date(now - 1000).toISOString(), 7, now), false, "past is not about to expire");
  });

  it("permissionsOf() answers can() from the rules a SelfSubjectRulesReview lists", () => {
    const member = permissionsOf({
      resourceRules: [
        { verbs: ["list", "watch"], apiGroups: ["management.platform.sh"], resources: ["projects"] },
        { verbs: ["get"], apiGroups: ["management.platform.sh"], resources: ["projects"], resourceNames: ["web"] },
        {
          verbs: ["create"],
          apiGroups: ["management.platform.sh"],
          resources: ["users/password"],
          resourceNames: ["maria"],
        },
        { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectrulesreviews"] },
      ],
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }],
    });
    assert.equal(member.can("list", "projects"), true);
    assert.equal(member.can("get", "projects", "web"), true);
    assert.equal(member.can("get", "projects", "other"), false);
    assert.equal(member.can("get", "projects"), false, "a named rule is not a rule on every object");
    assert.equal(member.can("create", "users/password", "maria"), true);
    assert.equal(member.can("create", "projects"), false);
    assert.equal(member.can("create", "selfsubjectrulesreviews"), false, "another group");
    assert.equal(member.canGet("/apis/management.platform.sh/v1"), true);
    assert.equal(member.canGet("/metrics"), false);
    const admin = permissionsOf({
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    });
    assert.equal(admin.can("delete", "users", "anyone"), true);
    assert.equal(admin.canGet("/platform/replicas"), true);
    assert.equal(permissionsOf({}).can("get", "projects", "web"), false);
  });

  it("parseReadyz() and parseMetrics() read the platform's health", () => {
    const checks = parseReadyz(
      "[+]ping ok\n[+]store-housekeeping ok (warning: free disk is low: 1 GiB)\n[-]etcd failed: reason withheld\nreadyz check failed\n",
    );
    assert.deepEqual(checks, [
      { name: "ping", ok: true },
      { name: "store-housekeeping", ok: true, warning: "free disk is low: 1 GiB" },
      { name: "etcd", ok: false },
    ]);
    const metrics = parseMetrics(
      [
        "# HELP apiserver_storage_size_bytes Size",
        "apiserver_storage_size_bytes 2048",
        'apiserver_audit_error_total{plugin="log"} 2',
        'apiserver_audit_error_total{plugin="datastore"} 1',
        "other_metric 5",
      ].join("\n"),
      ["apiserver_storage_size_bytes", "apiserver_audit_error_total"],
    );
    assert.deepEqual(metrics, { apiserver_storage_size_bytes: 2048, apiserver_audit_error_total: 3 });
  });

  it("groupRequests() folds stages into one request per auditID; isConsoleAsset() finds the console's own files", () => {
    const event = (auditID: string, stage: string, extra: Record<string, unknown> = {}): AuditEventObject => ({
      apiVersion: "management.platform.sh/v1",
      kind: "AuditEvent",
      metadata: { name: auditID, creationTimestamp: "2026-11-25T12:00:00Z" },
      event: { auditID, stage, verb: "create", ...extra },
    });
    const requests = groupRequests([
      event("b", "ResponseComplete", { responseStatus: { code: 201 } }),
      event("a", "ResponseComplete"),
      event("b", "RequestReceived"),
    ]);
    assert.deepEqual(
      requests.map((r) => [r.auditID, r.stages.map((s) => s.event.stage)]),
      [
        ["b", ["RequestReceived", "ResponseComplete"]],
        ["a", ["ResponseComplete"]],
      ],
    );
    assert.equal(requests[0].latest.responseStatus?.code, 201);
    const anonymous = { username: "system:anonymous" };
    const get = (requestURI: string, user = anonymous, code = 200) => ({
      verb: "get",
      requestURI,
      user,
      responseStatus: { code },
    });
    assert.equal(isConsoleAsset(get("/assets/index-abc.js")), true);
    assert.equal(isConsoleAsset(get("/console/settings")), true);
    assert.equal(isConsoleAsset(get("/users")), true, "a page load");
    assert.equal(isConsoleAsset(get("/projects/web/virtualclusters/shop")), true);
    assert.equal(isConsoleAsset(get("/users", { username: "maria" }, 404)), false, "an API client, not a page");
    assert.equal(isConsoleAsset(get("/", anonymous, 401)), false, "a refused API call");
    assert.equal(isConsoleAsset(get("/auth/info")), false);
    assert.equal(isConsoleAsset({ ...get("/users"), objectRef: { resource: "users" } }), false);
    assert.equal(isConsoleAsset({ verb: "post", requestURI: "/auth/password/login" }), false);
  });

  it("scopeLabels() names every limit of a key; missing() names the empty required fields", () => {
    assert.deepEqual(scopeLabels(undefined), []);
    assert.deepEqual(
      scopeLabels({
        projects: [{ project: "web" }, { project: "*" }],
        virtualClusters: [{ project: "web", virtualCluster: "shop" }],
        roles: [{ role: "virtualcluster", projects: ["*"] }, { role: "platformCLI" }],
      }),
      ["Project web", "Project (all)", "Virtual cluster web/shop", "Role virtualcluster in *", "Role platformCLI"],
    );
    assert.deepEqual(
      missing([
        ["key-display-name", "  ", "Display Name"],
        ["key-expiry", "0", "Expiry"],
        ["user-username", undefined, "Username"],
      ]),
      { "key-display-name": "Display Name is required.", "user-username": "Username is required." },
    );
  });

  it("helmInstallCommand() names the chart, repository, version, namespace and the virtual cluster's kube context", () => {
    assert.equal(
      helmInstallCommand({
        release: "web",
        chart: "nginx",
        repositoryUrl: "https://charts.example.com/stable",
        version: "1.2.0",
        namespace: "apps",
        project: "shop",
        instance: "vc1",
      }),
      "helm install web nginx --repo https://charts.example.com/stable --version 1.2.0 --namespace apps --create-namespace --kube-context virtualcluster_vc1_shop",
    );
  });

  it("helmInstallCommand() reads a repository password from the environment and passes values on stdin", () => {
    const command = helmInstallCommand({
      release: "db",
      chart: "redis",
      repositoryUrl: "https://private.example.com",
      namespace: "default",
      project: "p",
      instance: "v",
      username: "reader",
      insecure: true,
      values: "replicas: 2",
    });
    assert.match(
      command,
      /--username reader --insecure-skip-tls-verify --password "\$HELM_REPO_PASSWORD" --values - <<'EOF'\nreplicas: 2\nEOF$/,
    );
    assert.equal(shellWord("it's"), `'it'"'"'s'`);
  });

  it("fetchWaitingOutBusy() sends a read or a repeatable call again after the network dropped it, any other write once", async () => {
    let requests = 0;
    // The first two connections close without an answer, as a changed network or a closed connection leaves them.
    const server = createServer((req, res) => {
      requests++;
      if (requests <= 2) req.socket.destroy();
      else res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    try {
      assert.deepEqual(await (await fetchWaitingOutBusy(url, { method: "GET" })).json(), { ok: true });
      assert.equal(requests, 3);
      requests = 0;
      const review = await fetchWaitingOutBusy(url, { method: "POST", body: "{}", repeatable: true });
      assert.deepEqual(await review.json(), { ok: true });
      assert.equal(requests, 3);
      requests = 0;
      await assert.rejects(fetchWaitingOutBusy(url, { method: "POST", body: "{}" }), TypeError);
      assert.equal(requests, 1, "a write that may have been done is not sent again");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("fetchWaitingOutBusy() waits out a busy server's 429 as its Retry-After says, and sends a refused write once only on 503", async () => {
    const answers = [429, 429, 200, 503];
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.method ?? "");
      const code = answers[seen.length - 1] ?? 200;
      res.writeHead(code, { "content-type": "application/json", ...(code === 200 ? {} : { "retry-after": "1" }) });
      res.end(JSON.stringify(code === 200 ? { ok: true } : { kind: "Status", code, message: "the server is busy" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    try {
      assert.deepEqual(await (await fetchWaitingOutBusy(url, { method: "GET" })).json(), { ok: true });
      assert.deepEqual(seen, ["GET", "GET", "GET"], "two refusals waited out, then served");
      assert.equal((await fetchWaitingOutBusy(url, { method: "POST", body: "{}" })).status, 503);
      assert.equal(seen.length, 4, "a write the server may have acted on is not sent again");
    } finally {
      server.close();
    }
  });
});
