// `platform start --config FILE` with the real platform: the file is the source (API writes 403 when it says so),
// its changes take effect without a restart, invalid content is logged by field path and the last good config
// stays, and no secret of the file ever appears in the log.

import assert from "node:assert/strict";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { capture, send } from "./support/https-json.ts";
import { eventually } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const CONFIG = "/apis/management.platform.sh/v1/configs/platform-config";
const FILE_SECRET = "file-client-s3cret";

const fileConfig = (extra: string) => `# managed by configuration management
disableConfigEndpoint: true
auth:
  oidc: {issuerUrl: "https://idp.example.com", clientId: platform, clientSecret: ${FILE_SECRET}}
${extra}`;

describe("platform config from a file", () => {
  let dir: string;
  let file: string;
  let platform: PlatformProcess;
  let logs: () => string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-config-file-"));
    file = join(dir, "platform.yaml");
    await writeFile(file, fileConfig("projectNamespacePrefix: file-\n"));
    platform = await startPlatformProcess({ extraArgs: ["--config", file] });
    logs = capture(platform.child.stderr);
  });
  after(async () => {
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const status = async () => (await send(platform, "GET", CONFIG, { token: platform.adminKey })).json().status;

  it("the file's config is in force from the start and readable through the API, secrets redacted", async () => {
    const current = await status();
    assert.equal(current.projectNamespacePrefix, "file-");
    assert.equal(current.disableConfigEndpoint, true);
    assert.equal(current.auth.oidc.clientSecret, "<redacted>");
  });

  it("API writes answer 403 saying the file is the source", async () => {
    for (const [method, contentType, body] of [
      ["PATCH", "application/merge-patch+json", { spec: { raw: "" } }],
      [
        "POST",
        "application/json",
        {
          apiVersion: "management.platform.sh/v1",
          kind: "Config",
          metadata: { name: "platform-config" },
          spec: { raw: "" },
        },
      ],
    ] as const) {
      const path = method === "POST" ? CONFIG.replace("/platform-config", "") : CONFIG;
      const reply = await send(platform, method, path, { token: platform.adminKey, body, contentType });
      assert.equal(reply.status, 403, reply.body);
      assert.match(reply.json().message, /managed through its config file \(disableConfigEndpoint is true\)/);
    }
  });

  it("a changed file takes effect without a restart", async () => {
    await writeFile(file, fileConfig("projectNamespacePrefix: edited-\nauthenticateVersionEndpoint: true\n"));
    await eventually(async () => (await send(platform, "GET", "/version")).status === 401, "/version to need a key");
    assert.equal((await status()).projectNamespacePrefix, "edited-");
  });

  it("a file replaced by rename (editors, ConfigMap mounts) takes effect too", async () => {
    const temporary = join(dir, ".platform.yaml.swp");
    await writeFile(temporary, fileConfig("projectNamespacePrefix: renamed-\n"));
    await rename(temporary, file);
    await eventually(async () => (await status()).projectNamespacePrefix === "renamed-", "the renamed file");
    assert.equal((await send(platform, "GET", "/version")).status, 200);
  });

  it("invalid content is logged by field path and the last good config stays in force", async () => {
    await writeFile(file, fileConfig("projectNamespacePrefix: Not_Valid\naudit: {enabled: true}\n"));
    await eventually(() => logs().includes("config file rejected"), "the rejection in the log");
    const line =
      logs()
        .split("\n")
        .find((l) => l.includes("config file rejected")) ?? "";
    assert.match(line, /spec\.raw\.projectNamespacePrefix/);
    assert.match(line, /spec\.raw\.audit\.path: Required value/);
    assert.equal((await status()).projectNamespacePrefix, "renamed-");
    await writeFile(file, "not: [valid yaml\n");
    await eventually(() => logs().includes("not valid YAML"), "the YAML error in the log");
    assert.equal((await status()).projectNamespacePrefix, "renamed-");
  });

  it("no secret from the file appears in the log", () => {
    assert.doesNotMatch(logs(), new RegExp(FILE_SECRET));
  });
});
