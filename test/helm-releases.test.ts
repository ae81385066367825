// Apps installed by a connected cluster's agent with a real helm (v3.8.1 from @aws-cdk/asset-kubectl-v20), every
// part a real process over HTTPS: the platform, a stand-alone host API server, its agent (`--helm-binary`), a
// virtual cluster the agent runs and a space, and a chart repository with basic auth serving a chart with
// templates built here. A HelmRelease installs the chart (its objects appear in the virtual cluster, and the
// Service is synced to the host), a new generation upgrades it, deleting it uninstalls it. Attacker's tests first:
// only project members with edit may install, a tenant never reaches another project's virtual cluster or space,
// and the agent never holds the repository's password or CA (the platform fetches the chart and sends the archive).

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { AgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { chromiumSkip, launchChromium, loginThroughConsole, PAGE_WAIT_MS } from "./support/chromium.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { adminCliEnv, connectTestCluster } from "./support/connected-cluster.ts";
import { helmBinary, helmSkip } from "./support/helm-binary.ts";
import { type HelmRepoServer, startHelmRepoServer } from "./support/helm-repo-server.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { describeInPrivateNetwork } from "./support/private-network.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const PASSWORD = "chart-repo-s3cret-9f2c";

const demoChart = (version: string) => ({
  name: "demo",
  version,
  values: "greeting: hello\nport: 80\n",
  files: {
    "templates/configmap.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  chart: {{ .Chart.Version | quote }}\n",
    "templates/service.yaml":
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  ports:\n    - port: {{ .Values.port }}\n      targetPort: 8080\n",
  },
});

describeInPrivateNetwork(
  import.meta.url,
  "apps installed by the agent with helm",
  { skip: kubectlSkip || helmSkip },
  () => {
    let root: string;
    let platform: PlatformProcess;
    let client: AuthClient;
    let admin: string;
    let host: ClusterApiServerProcess;
    let agent: AgentProcess;
    let agentDir: string;
    let repo: HelmRepoServer;
    let virtual: Kubectl;
    const keys: Record<string, string> = {};

    const release = (namespace: string, name: string) =>
      client.send("GET", `${MGMT}/namespaces/${namespace}/helmreleases/${name}`, { token: admin });
    const createRelease = (token: string, namespace: string, name: string, spec: Record<string, unknown>, query = "") =>
      client.send("POST", `${MGMT}/namespaces/${namespace}/helmreleases${query}`, {
        token,
        body: { apiVersion: V1, kind: "HelmRelease", metadata: { name }, spec },
      });
    const ready = async (namespace: string, name: string) =>
      (await release(namespace, name)).json().status?.conditions?.find((c: { type: string }) => c.type === "Ready");
    const hostKubectl = () => new Kubectl(host.kubeconfig);

    before(async () => {
      root = await mkdtemp(join(tmpdir(), "helm-releases-"));
      const helm = await helmBinary();
      repo = await startHelmRepoServer({ username: "charts", password: PASSWORD, charts: [demoChart("0.1.0")] });
      const repoCa = join(root, "repo-ca.pem");
      await writeFile(repoCa, repo.caPem);
      // The repository's CA for the platform's catalog too (the console's Apps page lists it).
      platform = await startPlatformProcess({
        extraArgs: ["--cluster-heartbeat-seconds", "1"],
        env: { NODE_EXTRA_CA_CERTS: repoCa },
      });
      client = new AuthClient(platform.url, platform.caPem);
      admin = platform.adminKey;
      host = await startClusterApiServerProcess();
      const env = await adminCliEnv(root, platform);
      agentDir = join(root, "agent");
      // The agent is told nothing of the repository (not even its CA): the platform fetches the chart for it.
      agent = await connectTestCluster({
        env,
        name: "edge",
        hostKubeconfig: host.kubeconfig,
        dataDir: agentDir,
        agentArgs: ["--helm-binary", helm],
      });
      const config = await client.send("PATCH", `${API}/configs/platform-config`, {
        token: admin,
        body: {
          spec: {
            raw: `apps:\n  repositories:\n    - ${JSON.stringify({ name: "charts", url: repo.url, username: "charts", password: PASSWORD })}\n`,
          },
        },
        contentType: "application/merge-patch+json",
      });
      assert.equal(config.status, 200, config.body);
      for (const user of ["dev", "viewer", "mallory"]) {
        await client.createUser(admin, user);
        keys[user] = await client.createKey(admin, `${user}-key`, { user });
      }
      assert.equal((await client.setPassword(admin, "dev", "dev-pass-123")).status, 201);
      for (const [name, members] of [
        [
          "alpha",
          [
            { name: "dev", clusterRole: "edit" },
            { name: "viewer", clusterRole: "view" },
          ],
        ],
        ["beta", [{ name: "mallory", clusterRole: "edit" }]],
      ] as const) {
        const project = await client.send("POST", `${MGMT}/projects`, {
          token: admin,
          body: { apiVersion: V1, kind: "Project", metadata: { name }, spec: { members } },
        });
        assert.equal(project.status, 201, project.body);
      }
      for (const body of [
        { kind: "VirtualClusterInstance", metadata: { name: "vc1" }, spec: { clusterRef: { cluster: "edge" } } },
        { kind: "SpaceInstance", metadata: { name: "alpha-space" }, spec: { clusterRef: { cluster: "edge" } } },
      ]) {
        const plural = body.kind === "SpaceInstance" ? "spaceinstances" : "virtualclusterinstances";
        const created = await client.send("POST", `${MGMT}/namespaces/p-alpha/${plural}`, {
          token: admin,
          body: { apiVersion: V1, ...body },
        });
        assert.equal(created.status, 201, created.body);
      }
      await waitFor(
        async () =>
          (await client.send("GET", `${MGMT}/namespaces/p-alpha/virtualclusterinstances/vc1`, { token: admin })).json()
            .status?.online === true,
        "the virtual cluster is online",
        180,
      );
      const kubeconfig = await client.send(
        "POST",
        `${MGMT}/namespaces/p-alpha/virtualclusterinstances/vc1/kubeconfig`,
        {
          token: admin,
          body: { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec: {} },
        },
      );
      assert.equal(kubeconfig.status, 201, kubeconfig.body);
      await writeFile(join(root, "vc1.kubeconfig"), kubeconfig.json().status.kubeConfig);
      virtual = new Kubectl(join(root, "vc1.kubeconfig"));
    });

    after(async () => {
      await agent?.stop();
      client?.close();
      await platform?.stop();
      await host?.stop();
      await repo?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    it("the cluster reports the helm its agent installs apps with", async () => {
      await waitFor(
        async () =>
          /^v3\.8\.1/.test(
            (await client.send("GET", `${MGMT}/clusters/edge`, { token: admin })).json().status?.helmVersion ?? "",
          ),
        "status.helmVersion",
      );
    });

    it("only project members with edit may install an app; viewers read, outsiders get nothing", async () => {
      const spec = { chart: { repository: "charts", name: "demo" }, target: { virtualClusterInstance: "vc1" } };
      const viewer = await createRelease(keys.viewer, "p-alpha", "by-viewer", spec);
      assert.equal(viewer.status, 403, viewer.body);
      assert.match(viewer.json().message, /role "view" in project "alpha"/);
      const outsider = await createRelease(keys.mallory, "p-alpha", "by-mallory", spec);
      assert.equal(outsider.status, 403, outsider.body);
      assert.match(outsider.json().message, /not a member of project "alpha"/);
      const dev = await createRelease(keys.dev, "p-alpha", "by-dev", spec, "?dryRun=All");
      assert.equal(dev.status, 201, dev.body);
      const list = await client.send("GET", `${MGMT}/namespaces/p-alpha/helmreleases`, { token: keys.viewer });
      assert.equal(list.status, 200, list.body);
      const bad = await createRelease(keys.dev, "p-alpha", "both", {
        chart: { repository: "charts", name: "demo" },
        target: { virtualClusterInstance: "vc1", space: "alpha-space" },
      });
      assert.equal(bad.status, 422, bad.body);
      assert.match(bad.json().message, /spec\.target: Invalid value.*exactly one of virtualClusterInstance or space/);
    });

    it("a tenant's app cannot reach another project's virtual cluster or space, nor write its own status", async () => {
      for (const [name, target] of [
        ["sideways-vc", { virtualClusterInstance: "vc1" }],
        ["sideways-space", { space: "alpha-space" }],
      ] as const) {
        const created = await createRelease(keys.mallory, "p-beta", name, {
          chart: { repository: "charts", name: "demo" },
          target,
        });
        assert.equal(created.status, 201, created.body);
        await waitFor(async () => (await ready("p-beta", name))?.reason === "TargetNotFound", `${name} refused`);
        assert.match((await ready("p-beta", name)).message, /project "beta" has no/);
      }
      const status = await client.send("PATCH", `${MGMT}/namespaces/p-beta/helmreleases/sideways-vc/status`, {
        token: keys.mallory,
        body: { status: { phase: "Deployed" } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(status.status, 403, status.body);
      assert.equal((await virtual.run(["get", "configmap", "sideways-vc-settings", "-A"])).code, 1);
      assert.equal(
        (await hostKubectl().run(["get", "configmap", "sideways-space-settings", "-n", "alpha-space"])).code,
        1,
      );
      for (const name of ["sideways-vc", "sideways-space"]) {
        const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-beta/helmreleases/${name}`, {
          token: keys.mallory,
        });
        assert.equal(deleted.status, 200, deleted.body);
        await waitFor(
          async () => (await release("p-beta", name)).status === 404,
          `${name} gone (nothing to uninstall)`,
        );
      }
    });

    it("installs into the virtual cluster, upgrades with new values and uninstalls when deleted", async () => {
      const created = await createRelease(keys.dev, "p-alpha", "web", {
        chart: { repository: "charts", name: "demo", version: "0.1.0" },
        target: { virtualClusterInstance: "vc1", namespace: "apps" },
        values: "greeting: hello from the platform\n",
      });
      assert.equal(created.status, 201, created.body);
      await waitFor(async () => (await release("p-alpha", "web")).json().status?.phase === "Deployed", "deployed");
      const deployed = (await release("p-alpha", "web")).json().status;
      assert.equal(deployed.revision, 1);
      assert.equal(deployed.chartVersion, "0.1.0");
      assert.equal(deployed.cluster, "edge");
      assert.equal((await ready("p-alpha", "web")).status, "True");
      const greeting = () =>
        virtual.ok(["get", "configmap", "web-settings", "-n", "apps", "-o", "jsonpath={.data.greeting}"]);
      assert.equal(await greeting(), "hello from the platform");
      await virtual.ok(["get", "service", "web-web", "-n", "apps"]);
      await waitFor(
        async () =>
          (await hostKubectl().run(["get", "services", "-n", "p-alpha-v-vc1", "-o", "name"])).stdout.includes(
            "web-web-x-apps-x-vc1",
          ),
        "the chart's Service is synced to the host",
      );
      assert.ok(
        repo.requests.some((r) => r.path === "/charts/demo-0.1.0.tgz" && r.authorized),
        "helm sent the credentials",
      );

      const upgraded = await client.send("PATCH", `${MGMT}/namespaces/p-alpha/helmreleases/web`, {
        token: keys.dev,
        body: { spec: { values: "greeting: upgraded\n" } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(upgraded.status, 200, upgraded.body);
      await waitFor(async () => (await release("p-alpha", "web")).json().status?.revision === 2, "revision 2");
      assert.equal(await greeting(), "upgraded");
      assert.equal((await release("p-alpha", "web")).json().status.observedGeneration, 2);

      const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-alpha/helmreleases/web`, { token: keys.dev });
      assert.equal(deleted.status, 200, deleted.body);
      await waitFor(async () => (await release("p-alpha", "web")).status === 404, "uninstalled, then gone");
      assert.equal((await virtual.run(["get", "configmap", "web-settings", "-n", "apps"])).code, 1);
      const records = await virtual.ok(["get", "secrets", "-n", "apps", "-l", "owner=helm", "-o", "name"]);
      assert.equal(records.trim(), "", "helm's release records are gone");
    });

    it("installs into a space as the space's own apps identity, and removes it", async () => {
      await waitFor(
        async () =>
          (await client.send("GET", `${MGMT}/namespaces/p-alpha/spaceinstances/alpha-space`, { token: admin })).json()
            .status?.phase === "Ready",
        "the space is Ready",
      );
      const created = await createRelease(keys.dev, "p-alpha", "cache", {
        chart: { repository: "charts", name: "demo" },
        target: { space: "alpha-space" },
      });
      assert.equal(created.status, 201, created.body);
      await waitFor(async () => (await release("p-alpha", "cache")).json().status?.phase === "Deployed", "deployed");
      const host = hostKubectl();
      assert.equal(
        await host.ok(["get", "configmap", "cache-settings", "-n", "alpha-space", "-o", "jsonpath={.data.greeting}"]),
        "hello",
      );
      const binding = JSON.parse(
        await host.ok(["get", "rolebinding", "platform-apps", "-n", "alpha-space", "-o", "json"]),
      );
      assert.equal(binding.roleRef.name, "edit");
      assert.deepEqual(binding.subjects, [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "platform:apps:alpha-space" },
      ]);
      const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-alpha/helmreleases/cache`, { token: keys.dev });
      assert.equal(deleted.status, 200, deleted.body);
      await waitFor(async () => (await release("p-alpha", "cache")).status === 404, "uninstalled, then gone");
      assert.equal((await host.run(["get", "configmap", "cache-settings", "-n", "alpha-space"])).code, 1);
      assert.equal((await host.run(["get", "rolebinding", "platform-apps", "-n", "alpha-space"])).code, 1);
    });

    it("the console's Apps page installs through the agent where it has helm", { skip: chromiumSkip }, async () => {
      const browser = await launchChromium();
      try {
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        const page = await context.newPage();
        page.setDefaultTimeout(PAGE_WAIT_MS);
        await page.goto(`${platform.url}/apps`);
        await loginThroughConsole(page, "dev", "dev-pass-123");
        const row = page.getByRole("row", { name: /charts\/demo/ });
        await row.waitFor();
        await row.getByRole("button", { name: "Details" }).click();
        await page.locator("#app-target").selectOption("virtualClusterInstance:p-alpha/vc1");
        await page.locator("#app-release").fill("from-console");
        await page.getByTestId("install-app").click();
        await page
          .getByTestId("install-state")
          .getByText(/^Deployed, revision 1/)
          .waitFor();
        assert.equal(await page.getByTestId("helm-command").count(), 0, "no command where the agent installs");
      } finally {
        await browser.close();
      }
      const greeting = [
        "get",
        "configmap",
        "from-console-settings",
        "-n",
        "default",
        "-o",
        "jsonpath={.data.greeting}",
      ];
      assert.equal(await virtual.ok(greeting), "hello");
      const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-alpha/helmreleases/from-console`, {
        token: keys.dev,
      });
      assert.equal(deleted.status, 200, deleted.body);
      await waitFor(async () => (await release("p-alpha", "from-console")).status === 404, "uninstalled");
    });

    it("an app for a virtual cluster no agent with helm runs is refused at once, saying what to do instead", async () => {
      const external = await client.send("POST", `${MGMT}/namespaces/p-alpha/virtualclusterinstances`, {
        token: admin,
        body: {
          apiVersion: V1,
          kind: "VirtualClusterInstance",
          metadata: { name: "outside" },
          spec: { external: true },
        },
      });
      assert.equal(external.status, 201, external.body);
      const refused = await createRelease(keys.dev, "p-alpha", "nowhere", {
        chart: { repository: "charts", name: "demo" },
        target: { virtualClusterInstance: "outside" },
      });
      assert.equal(refused.status, 422, refused.body);
      assert.match(refused.json().message, /not run by a connected cluster's agent: install with the helm command/);
    });

    it("the agent never has the repository password: not in its log, not in any file it keeps", async () => {
      assert.ok(!agent.output().includes(PASSWORD), "the agent's log");
      const basic = Buffer.from(`charts:${PASSWORD}`).toString("base64");
      for (const entry of await readdir(agentDir, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const text = await readFile(join(entry.parentPath, entry.name), "latin1");
        assert.ok(
          !text.includes(PASSWORD) && !text.includes(basic),
          `${entry.name} holds the repository's credentials`,
        );
      }
      const left = join(agentDir, "helm-releases");
      for (const uid of existsSync(left) ? await readdir(left) : []) {
        assert.ok(!existsSync(join(left, uid, "chart.tgz")), `${uid}: the chart archive removed after the run`);
      }
    });
  },
);
