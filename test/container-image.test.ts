// The image `npm run image` builds (container/): its size, labels and health check, and what a security reviewer
// checks first: it runs as a non-root user, has no shell and no package manager, and works with a read-only root.
// The image is built once per change of its inputs and shared with the other container tests (support/containers.ts).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { BuiltImage } from "../container/build-image.ts";
import { containersMissing, podman, TestContainers, testImage } from "./support/containers.ts";

const MANIFEST = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
  license: string;
};

/** Runs Node in the image (not the entrypoint) with a read-only root: what it prints. */
const inImage = (image: string, script: string) =>
  podman(["run", "--rm", "--read-only", "--entrypoint=/usr/local/bin/node", image, "-e", script]);

const LOOK_AROUND = `
const fs = require("node:fs");
const executables = [];
for (const dir of ["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]) {
  let names = [];
  try { names = fs.readdirSync(dir); } catch {}
  for (const name of names) {
    const stat = fs.statSync(dir + "/" + name, { throwIfNoEntry: false });
    if (stat && stat.isFile() && (stat.mode & 0o111)) executables.push(dir + "/" + name);
  }
}
let write = "written";
try { fs.writeFileSync("/opt/virtualcluster/x", "x"); } catch (error) { write = error.code; }
const data = fs.statSync("/var/lib/virtualcluster");
console.log(JSON.stringify({
  uid: process.getuid(), gid: process.getgid(), executables, write,
  data: { uid: data.uid, mode: (data.mode & 0o777).toString(8) },
  apt: fs.existsSync("/usr/bin/apt") || fs.existsSync("/usr/bin/dpkg"),
  packages: fs.readdirSync("/var/lib/dpkg/status.d").sort(),
  tmp: (fs.writeFileSync("/tmp/x", "x"), "writable"),
}));`;

describe("the container image", { skip: containersMissing(), timeout: 900_000 }, () => {
  let image: BuiltImage;
  const containers = new TestContainers();

  before(
    async () => {
      image = await testImage();
    },
    { timeout: 900_000 },
  );
  after(() => containers.removeAll());

  it("npm run image builds it within 200 MB uncompressed, tagged with the version, with the OCI labels", async () => {
    assert.ok(image.sizeBytes > 0 && image.sizeBytes <= 200_000_000, `${image.sizeBytes} bytes`);
    const labels = JSON.parse(await podman(["image", "inspect", "--format", "{{json .Labels}}", image.ref]));
    assert.equal(labels["org.opencontainers.image.version"], MANIFEST.version);
    assert.equal(labels["org.opencontainers.image.licenses"], MANIFEST.license);
    assert.equal(labels["org.opencontainers.image.title"], "virtualcluster-platform");
    assert.match(labels["org.opencontainers.image.created"], /^\d{4}-\d\d-\d\dT/);
    const versionImage = (await podman(["image", "inspect", "--format", "{{.Id}}", image.versionRef])).trim();
    assert.ok(versionImage.length > 0);
  });

  it("runs as the non-root user 65532 with no shell or package manager, and needs no writable root", async () => {
    const seen = JSON.parse(await inImage(image.ref, LOOK_AROUND));
    assert.equal(seen.uid, 65532);
    assert.equal(seen.gid, 65532);
    assert.deepEqual(seen.executables, ["/usr/local/bin/node"], "node is the only program");
    assert.equal(seen.apt, false);
    assert.equal(seen.write, "EROFS", "the root file system is read-only");
    assert.deepEqual(seen.data, { uid: 65532, mode: "700" }, "the data directory is the user's alone");
    assert.ok(seen.packages.includes("libc6"), "scanners find the Debian packages it holds");
    await assert.rejects(
      podman(["run", "--rm", "--entrypoint=/bin/sh", image.ref, "-c", "true"]),
      /no such file or directory|not found/,
    );
  });

  it("its entrypoint is the virtualcluster program, with every long-running command", async () => {
    const [version, help] = await Promise.all([
      podman(["run", "--rm", "--read-only", image.ref, "--version"]),
      podman(["run", "--rm", "--read-only", image.ref, "--help"]),
    ]);
    assert.equal(version.trim(), MANIFEST.version);
    for (const command of ["platform", "apiserver", "run", "create"]) {
      assert.match(help, new RegExp(`^  ${command} `, "m"), command);
    }
  });

  it("declares its health check on /readyz, its data volume, user and stop signal", async () => {
    const config = JSON.parse(await podman(["image", "inspect", "--format", "{{json .Config}}", image.ref]));
    assert.equal(config.User, "65532:65532");
    assert.deepEqual(Object.keys(config.Volumes), ["/var/lib/virtualcluster"]);
    assert.equal(config.StopSignal, "SIGTERM");
    assert.ok(config.Env.includes("SQLITE_TMPDIR=/var/lib/virtualcluster"), "SQLite's temporary files on the volume");
    const health = JSON.parse(await podman(["image", "inspect", "--format", "{{json .HealthCheck}}", image.ref]));
    assert.deepEqual(health.Test, ["CMD", "/usr/local/bin/node", "/opt/virtualcluster/healthcheck.mjs"]);
  });
});
