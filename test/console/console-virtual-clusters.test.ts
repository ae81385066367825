// A project's virtual clusters in the console, against a real running one: the platform, a stand-alone host API
// server and `virtualcluster run` connected with a dedicated key. The console shows the instance online; a
// kubeconfig downloaded from it (token and client-certificate forms) works with kubectl; the connect command is
// offered for copying; an endpoint token issued once works against the virtual cluster.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  chromiumSkip,
  launchChromium,
  loginThroughConsole,
  PAGE_WAIT_MS,
  seriousViolations,
} from "../support/chromium.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "../support/cluster-apiserver-process.ts";
import { httpsCall } from "../support/https-call.ts";
import { Kubectl, kubectlSkip } from "../support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";
import { type RuntimeProcess, startRuntimeProcess } from "../support/runtime-process.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";
const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? new URL("../../test-results/console/", import.meta.url).pathname;

describeInPrivateNetwork(
  import.meta.url,
  "virtual clusters in the console",
  { skip: chromiumSkip || kubectlSkip },
  () => {
    let platform: PlatformProcess;
    let host: ClusterApiServerProcess;
    let runtime: RuntimeProcess;
    let browser: Browser;
    let page: Page;

    before(async () => {
      [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
      const hostctl = new Kubectl(host.kubeconfig);
      const key = await httpsCall(
        platform,
        "POST",
        `${API}/ownedaccesskeys`,
        { authorization: `Bearer ${platform.adminKey}` },
        {
          apiVersion: "management.platform.sh/v1",
          kind: "OwnedAccessKey",
          metadata: { name: "dev-key" },
          spec: {
            type: "User",
            user: "admin",
            displayName: "dev",
            scope: { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] },
          },
        },
      );
      assert.equal(key.status, 201, key.text());
      await hostctl.ok(["create", "namespace", "team-a"]);
      await hostctl.ok(
        ["apply", "-f", "-"],
        JSON.stringify({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "virtualcluster-platform-api-key", namespace: "team-a" },
          stringData: {
            accessKey: key.json().spec.key,
            host: new URL(platform.url).host,
            certificateAuthorityData: platform.caPem,
          },
        }),
      );
      runtime = await startRuntimeProcess({
        name: "dev",
        namespace: "team-a",
        settings: "external:\n  platform: {}\n",
        hostKubeconfig: host.kubeconfig,
      });
      browser = await launchChromium();
      const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
      page = await context.newPage();
      page.setDefaultTimeout(PAGE_WAIT_MS);
      await page.goto(`${platform.url}/projects/default`);
      const password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
      await loginThroughConsole(page, "admin", password);
      await page.waitForURL((url) => url.pathname === "/projects/default");
    });

    after(async () => {
      await browser?.close();
      await runtime?.stop();
      await Promise.all([platform?.stop(), host?.stop()]);
    });

    it("shows the connected instance online, live", async () => {
      const row = page.getByRole("row", { name: /dev/ });
      await row.getByText("Online").waitFor();
      await row.getByText("Ready").waitFor();
      await page.screenshot({ path: join(SHOTS, "project-instances.png"), fullPage: true });
      assert.deepEqual(await seriousViolations(page), []);
    });

    it("downloads kubeconfigs that work with kubectl: token and client certificate", async () => {
      for (const form of ["Access token", "Client certificate"]) {
        await page.getByRole("button", { name: "Actions for dev" }).click();
        await page.getByRole("menuitem", { name: "Download kubeconfig" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByRole("radio", { name: form }).check();
        if (form === "Client certificate") {
          await dialog.getByRole("spinbutton", { name: "Certificate TTL (hours)" }).fill("2");
          await page.screenshot({ path: join(SHOTS, "kubeconfig-dialog.png") });
          assert.deepEqual(await seriousViolations(page), []);
        }
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          dialog.getByRole("button", { name: "Download" }).click(),
        ]);
        assert.equal(download.suggestedFilename(), "dev.kubeconfig");
        const file = join(runtime.dataDir, `console-${form.replace(/\W/g, "")}.kubeconfig`);
        await download.saveAs(file);
        const document = await readFile(file, "utf8");
        assert.match(document, form === "Access token" ? /token:/ : /client-certificate-data:/);
        const namespaces = await new Kubectl(file).ok(["get", "namespaces", "-o", "name"]);
        assert.match(namespaces, /namespace\/default/, `the ${form} kubeconfig works`);
      }
    });

    it("offers the connect command and an endpoint token shown once", async () => {
      await page.getByRole("button", { name: "Actions for dev" }).click();
      await page.getByRole("menuitem", { name: "Copy connect command" }).click();
      const dialog = page.getByRole("dialog");
      assert.equal(
        await dialog.getByRole("textbox", { name: "Connect command" }).inputValue(),
        "virtualcluster connect dev --project default",
      );
      await dialog.getByRole("button", { name: "Done" }).click();

      await page.getByRole("button", { name: "Actions for dev" }).click();
      await page.getByRole("menuitem", { name: "Issue endpoint token" }).click();
      await dialog.getByRole("button", { name: "Issue token" }).click();
      const token = await dialog.getByRole("textbox", { name: "Endpoint token" }).inputValue();
      await page.screenshot({ path: join(SHOTS, "endpoint-token.png") });
      await dialog.getByRole("button", { name: "Done" }).click();
      const direct = await new Kubectl(runtime.kubeconfig).ok(["--token", token, "get", "namespaces", "-o", "name"]);
      assert.match(direct, /namespace\/default/);
    });
  },
);
