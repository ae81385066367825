// deploy/: no Kubernetes runs here, so the manifests are checked for what can be checked without one. Their parts
// fit together (Secret name, ports, mounts, image, the flags `platform start` has), and the pod runs under podman as
// the StatefulSet describes it: the init container's script with only CAP_CHOWN on a root-owned volume and a root-only
// key file, then the platform as user 65532 with no capabilities, a read-only root and that key.

import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Script } from "node:vm";
import { parse, parseAllDocuments } from "yaml";
import { AuthClient } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { containersMissing, podman, TestContainers, testImage } from "./support/containers.ts";
import { waitForOutput } from "./support/platform-container.ts";
import { waitFor } from "./support/wait-for.ts";

const read = (file: string) => readFileSync(new URL(`../deploy/${file}`, import.meta.url), "utf8");
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
  .version;

// biome-ignore lint/suspicious/noExplicitAny: manifests are read field by field
type Manifest = any;
const manifests: Manifest[] = parseAllDocuments(read("platform.yaml")).map((doc) => doc.toJSON());
const kustomization: Manifest = parse(read("kustomization.yaml"));
const statefulSet = manifests.find((m) => m.kind === "StatefulSet");
const service = manifests.find((m) => m.kind === "Service");
const pod = statefulSet.spec.template.spec;
const [init] = pod.initContainers;
const [platform] = pod.containers;
const mountPath = (container: Manifest, volume: string) =>
  container.volumeMounts.find((mount: Manifest) => mount.name === volume)?.mountPath;

describe("deploy/ manifests", () => {
  it("fit together: Secret, volumes, ports, probes, the image of this version", () => {
    assert.deepEqual(kustomization.resources, ["platform.yaml"]);
    const secretVolume = pod.volumes.find((volume: Manifest) => volume.name === "encryption-key");
    assert.equal(secretVolume.secret.secretName, kustomization.secretGenerator[0].name);
    assert.equal(statefulSet.spec.volumeClaimTemplates[0].metadata.name, "data");
    assert.equal(mountPath(platform, "data"), "/var/lib/virtualcluster");
    assert.equal(service.spec.ports[0].targetPort, platform.ports[0].name);
    for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      assert.equal(platform[probe].httpGet.port, platform.ports[0].name, probe);
      assert.equal(platform[probe].httpGet.scheme, "HTTPS", probe);
    }
    assert.equal(platform.readinessProbe.httpGet.path, "/readyz");
    for (const container of [init, platform])
      assert.equal(container.image, `localhost/virtualcluster-platform:${VERSION}`);
    assert.deepEqual(statefulSet.spec.selector.matchLabels, statefulSet.spec.template.metadata.labels);
  });

  it("run the platform as the image's user, without capabilities, on a read-only root", () => {
    const security = platform.securityContext;
    assert.equal(security.runAsUser, 65532);
    assert.equal(security.runAsNonRoot, true);
    assert.equal(security.readOnlyRootFilesystem, true);
    assert.equal(security.allowPrivilegeEscalation, false);
    assert.deepEqual(security.capabilities, { drop: ["ALL"] });
    assert.deepEqual(init.securityContext.capabilities, { drop: ["ALL"], add: ["CHOWN"] });
    assert.equal(pod.automountServiceAccountToken, false);
  });

  it("pass only flags `platform start` has, and the key file the init container writes", async () => {
    const help = await runCli(["platform", "start", "--help"]);
    for (const flag of platform.args.filter((arg: string) => arg.startsWith("--"))) {
      assert.ok(help.stdout.includes(`${flag} `), `${flag} is an option of platform start`);
    }
    const keyFile = platform.args[platform.args.indexOf("--encryption-key-file") + 1];
    assert.ok(keyFile.startsWith(`${mountPath(platform, "keys")}/`));
    assert.ok(init.args[0].includes(`"${keyFile}"`));
    assert.doesNotThrow(() => new Script(init.args[0]), "the init script is JavaScript");
  });
});

describe("deploy/ pod, run with podman as the StatefulSet describes it", {
  skip: containersMissing(),
  timeout: 900_000,
}, () => {
  const containers = new TestContainers();
  const root = mkdtempSync(join(tmpdir(), "vc-deploy-"));
  let image: string;

  before(
    async () => {
      image = (await testImage()).ref;
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await containers.removeAll();
    rmSync(root, { recursive: true, force: true });
  });

  it("the init container prepares a root-owned volume and the key; the platform starts with them", async () => {
    // A Secret's file: root's, mode 0400 (defaultMode). A new volume: root's, 0755 (podman would give a named volume
    // the owner of the image's directory, which a Kubernetes volume does not get). An emptyDir: root's, 0777.
    const secretKey = join(root, "encryption.key");
    writeFileSync(secretKey, `${Buffer.alloc(32, 7).toString("base64")}\n`);
    chmodSync(secretKey, 0o400);
    const data = join(root, "data");
    const keys = join(root, "keys");
    mkdirSync(data, { mode: 0o755 });
    mkdirSync(keys);
    chmodSync(keys, 0o777);
    const secretMount = `${mountPath(init, "encryption-key")}/encryption.key`;
    await podman([
      ...["run", "--rm", "--read-only", "--user=0", "--cap-drop=ALL", "--cap-add=CHOWN"],
      "--security-opt=no-new-privileges",
      `--volume=${data}:${mountPath(init, "data")}`,
      `--volume=${keys}:${mountPath(init, "keys")}`,
      `--volume=${secretKey}:${secretMount}:ro`,
      `--entrypoint=${init.command[0]}`,
      image,
      ...init.command.slice(1),
      ...init.args,
    ]);
    assert.deepEqual([statSync(data).uid, statSync(data).mode & 0o777], [65532, 0o700]);
    const copied = statSync(join(keys, "encryption.key"));
    assert.deepEqual([copied.uid, copied.mode & 0o777], [65532, 0o600]);
    // The manifest's arguments, on a free port of the host's network instead of 8443.
    const args = [...platform.args];
    args[args.indexOf("--port") + 1] = "0";
    const name = await containers.run("deploy-pod", [
      ...["--read-only", "--user=65532:65532", "--cap-drop=ALL", "--security-opt=no-new-privileges", "--network=host"],
      `--volume=${data}:${mountPath(platform, "data")}`,
      `--volume=${keys}:${mountPath(platform, "keys")}:ro`,
      `--tmpfs=${mountPath(platform, "tmp")}`,
      image,
      ...args,
    ]);
    const [, url] = await waitForOutput(containers, name, /Platform listening on (https:\/\/\S+)/);
    const client = new AuthClient(url, readFileSync(join(data, "pki", "ca.crt"), "utf8"));
    await waitFor(async () => (await client.send("GET", "/readyz")).status === 200, "/readyz");
    client.agent.destroy();
    assert.equal(existsSync(join(data, "pki", "encryption.key")), false, "it used the Secret's key and made none");
  });
});
