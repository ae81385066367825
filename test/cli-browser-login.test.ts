// `virtualcluster platform login URL` without --access-key: the CLI lists the login methods, listens on 127.0.0.1,
// prints the login address (--no-browser), and receives the Login key that the platform's callback page posts to
// it, checked against its one-time state. Driven end to end by a test browser through a real OpenID provider.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { formsOf, TestBrowser } from "./support/browser.ts";
import { assertCliFailure, runCli } from "./support/cli-run.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { keyWorks, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

const MAIN = new URL("../src/cli/main.ts", import.meta.url).pathname;

describe("CLI browser login", () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let home: string;
  let caFile: string;
  const env = () => ({ ...process.env, VIRTUALCLUSTER_HOME: home });

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "vcp-cli-sso-"));
    platform = await startPlatformProcess();
    provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
    provider.accounts.set("gina", { email: "gina@example.com", preferred_username: "gina", groups: ["dev"] });
    caFile = join(platform.dataDir, "pki", "ca.crt");
    const providerCa = await tempFile("provider-ca.pem", provider.tls.caPem);
    await setPlatformConfig(
      platform,
      `auth:
  oidc:
${oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/oidc/callback`, caFile: providerCa, indent: "    " })}  saml:
    ssoURL: https://127.0.0.1:1/sso
    redirectURI: ${platform.url}/auth/saml/callback
    insecureSkipSignatureValidation: true
`,
    );
  });
  after(async () => {
    await platform?.stop();
    await provider?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("with several connectors and no --connector, it names them", async () => {
    assertCliFailure(
      await runCli(["platform", "login", platform.url, "--ca-file", caFile], { env: env() }),
      /several login connectors; choose one with --connector \(oidc, saml\)/,
    );
    assertCliFailure(
      await runCli(["platform", "login", platform.url, "--ca-file", caFile, "--connector", "github"], { env: env() }),
      /no login connector "github" \(it has: oidc, saml\)/,
    );
  });

  it("logs in through the browser and stores a working Login key", async () => {
    const child = spawn(
      process.execPath,
      [MAIN, "platform", "login", platform.url, "--ca-file", caFile, "--connector", "oidc", "--no-browser"],
      { env: env(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    const address = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
        const match = /^\s+(https:\/\/\S+\/auth\/oidc\/login\?\S+)$/m.exec(stderr);
        if (match) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`login exited with ${code}: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.match(stderr, /Login methods of/);
    assert.match(stderr, /oidc\s+OpenID Connect \(oidc\)\s+<- logging in with this/);
    const loopback = new URL(String(new URL(address).searchParams.get("cli_redirect")));
    assert.equal(loopback.hostname, "127.0.0.1");

    // A post without the CLI's state is refused, and the CLI keeps waiting.
    const b = new TestBrowser([platform.caPem, provider.tls.caPem]);
    const forged = await b.navigate(loopback.toString(), { form: { state: "forged-state-value", accessKey: "x" } });
    assert.equal(forged.status, 400);

    let page = await b.navigate(address);
    page = await b.submit(page, { login: "gina", password: "x" });
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await b.submit(page);
    // The platform's callback page posts the key to the CLI's loopback address.
    assert.equal(page.status, 200, page.body);
    assert.equal(formsOf(page)[0]?.action, loopback.toString());
    assert.ok(!page.trail.some((url) => /accessKey|key=/.test(url)), "the key never travels in a URL");
    const done = await b.submit(page);
    assert.equal(done.status, 200);
    assert.match(done.body, /You can close this window/);

    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /Logged in to .* as user gina/);
    const stored = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    assert.equal(await keyWorks(platform, stored.platform.accessKey, "gina"), 200);
    // No browser session cookie for a CLI login: the key went to the terminal only.
    assert.equal(
      (await b.jar.getCookies(`${platform.url}/`)).some((c) => c.key === "vcp_session"),
      false,
    );

    const out = await runCli(["platform", "logout"], { env: env() });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(await keyWorks(platform, stored.platform.accessKey, "gina"), 401);
  });
});
