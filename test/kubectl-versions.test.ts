// Every kubectl on the machine (the Cloud SDK's kubectl.1.27 .. kubectl.1.33 and the `kubectl` on PATH) against one
// platform: client-side `apply` (create, then update), `edit` through an EDITOR script, and `diff`. kubectl 1.27 and
// 1.28 read the OpenAPI v2 document as protobuf for apply; `explain --output=plaintext-openapiv2` shows what they
// made of it.

import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Kubectl, kubectlAvailable } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const SDK_BIN = "/usr/lib/google-cloud-sdk/bin";

function installedKubectls(): { name: string; binary: string }[] {
  let versioned: string[] = [];
  try {
    versioned = readdirSync(SDK_BIN).filter((name) => /^kubectl\.1\.\d+$/.test(name));
  } catch {
    // No Cloud SDK: only the kubectl on PATH.
  }
  const found = versioned
    .sort((a, b) => Number(a.split(".")[2]) - Number(b.split(".")[2]))
    .map((name) => ({ name, binary: join(SDK_BIN, name) }));
  if (kubectlAvailable) found.push({ name: "kubectl", binary: "kubectl" });
  return found;
}

const kubectls = installedKubectls();
const teamYaml = (name: string, displayName: string) =>
  `apiVersion: management.platform.sh/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  displayName: ${displayName}\n`;

describe("every kubectl on the machine", { skip: kubectls.length === 0 ? "no kubectl installed" : false }, () => {
  let platform: PlatformProcess;
  let work: string;
  let editor: string;

  before(async () => {
    platform = await startPlatformProcess();
    work = await mkdtemp(join(tmpdir(), "kubectl-versions-"));
    editor = join(work, "editor.sh");
    // kubectl edit runs `$EDITOR <file>`: change the display name in place.
    await writeFile(editor, '#!/bin/sh\nsed -i "s/displayName: .*/displayName: Edited/" "$1"\n');
    await chmod(editor, 0o755);
  });
  after(async () => {
    await platform?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const { name, binary } of kubectls) {
    it(`${name} apply, edit and diff a Team`, async () => {
      const kubectl = new Kubectl(platform.kubeconfig, { binary, env: { EDITOR: editor } });
      const team = `team-${name.replaceAll(".", "-")}`;
      const file = join(work, `${team}.yaml`);
      const displayName = async () =>
        JSON.parse(await kubectl.ok(["get", "teams.management.platform.sh", team, "-o", "json"])).spec.displayName;

      await writeFile(file, teamYaml(team, "Created"));
      assert.match(await kubectl.ok(["apply", "-f", file]), new RegExp(`^team.management.platform.sh/${team} created`));
      await writeFile(file, teamYaml(team, "Applied"));
      assert.match(await kubectl.ok(["apply", "-f", file]), /configured/);
      assert.equal(await displayName(), "Applied");

      assert.match(await kubectl.ok(["edit", "teams.management.platform.sh", team]), /edited/);
      assert.equal(await displayName(), "Edited");

      await writeFile(file, teamYaml(team, "Diffed"));
      const changed = await kubectl.run(["diff", "-f", file]);
      assert.equal(changed.code, 1, `diff exits 1 on a difference:\n${changed.stderr}`);
      assert.match(changed.stdout, /^-\s+displayName: Edited$/m);
      assert.match(changed.stdout, /^\+\s+displayName: Diffed$/m);
      assert.equal(await displayName(), "Edited", "diff changes nothing");
      await writeFile(file, teamYaml(team, "Edited"));
      const same = await kubectl.run(["diff", "-f", file]);
      assert.equal(same.code, 0, `no difference:\n${same.stdout}${same.stderr}`);
    });
  }

  const oldest = kubectls.find((k) => k.name === "kubectl.1.27" || k.name === "kubectl.1.28");
  it("kubectl 1.27/1.28 explain --output=plaintext-openapiv2 reads the protobuf document", {
    skip: !oldest,
  }, async () => {
    const kubectl = new Kubectl(platform.kubeconfig, { binary: oldest?.binary });
    const explained = await kubectl.ok(["explain", "users.spec", "--recursive", "--output=plaintext-openapiv2"]);
    assert.match(explained, /^KIND:\s+User$/m);
    assert.match(explained, /^VERSION:\s+management\.platform\.sh\/v1$/m);
    assert.match(explained, /^ {3}access\t<\[\]Object>$/m, "arrays of objects (ItemsItem)");
    assert.match(explained, /^ {3}extraClaims\t<map\[string\]string>$/m, "maps (additionalProperties)");
    assert.match(explained, /^ {3}disabled\t<boolean>$/m);
    const described = await kubectl.ok(["explain", "teams", "--output=plaintext-openapiv2"]);
    assert.match(described, /Team is a group of users/);
  });
});
