// The base layer: the C and C++ runtime libraries Node needs (libc6, libstdc++6, libgcc-s1) extracted from the Debian
// archive apt already uses, by mmdebstrap's `extract` variant (no maintainer scripts, no dpkg, no shell), then the
// few files a distroless root needs: the users, name lookup order, the package list scanners read, a data directory
// for the non-root user, and /tmp.

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeLayerTar } from "./layer-tar.ts";
import { runTool } from "./run-tool.ts";

/** The user the image runs as (distroless' "nonroot" number), owner of the data directory. */
export const IMAGE_UID = 65532;
export const DATA_DIR = "/var/lib/virtualcluster";
const PACKAGES = ["libc6", "libstdc++6", "libgcc-s1"];

export interface DebianSource {
  /** Debian suite, e.g. bookworm. */
  suite: string;
  /** apt sources file (one-line or deb822 format) mmdebstrap downloads from. */
  sources: string;
  /** Debian architecture, e.g. amd64. */
  architecture: string;
}

const DEBIAN_ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

/** The Debian architecture of this machine (the image's, as Node's binary is this machine's). */
export function debianArchitecture(): string {
  const architecture = DEBIAN_ARCH[process.arch];
  if (!architecture) throw new Error(`no image for ${process.arch}: it is built for amd64 or arm64`);
  return architecture;
}

/** The suite and archive this machine's apt uses (the image matches the machine that builds it). */
export function machineDebianSource(): DebianSource {
  const osRelease = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
  const suite = /^VERSION_CODENAME=("?)([a-z]+)\1$/m.exec(osRelease)?.[2];
  const sources = ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"].find(
    (file) => existsSync(file) && readFileSync(file, "utf8").trim() !== "",
  );
  if (!suite || !sources) {
    throw new Error(
      "the image's base is made from Debian packages with mmdebstrap: build on Debian, " +
        "or pass --debian-suite and --debian-sources",
    );
  }
  return { suite, sources, architecture: debianArchitecture() };
}

// Each package's control fields, as distroless images keep them, so image scanners know what is installed.
const STATUS_HOOK =
  'mkdir -p "$1/var/lib/dpkg/status.d" && for deb in "$1"/var/cache/apt/archives/*.deb; do ' +
  'dpkg-deb --field "$deb" > "$1/var/lib/dpkg/status.d/$(dpkg-deb --field "$deb" Package)"; done';

/** What the layer keeps of the extracted packages (documentation, gconv modules and debugger scripts go). */
function prune(root: string): void {
  for (const path of [
    "dev",
    "etc",
    "tmp",
    "usr/share/gcc",
    "usr/share/gdb",
    "usr/share/lintian",
    "usr/lib/x86_64-linux-gnu/gconv",
    "usr/lib/aarch64-linux-gnu/gconv",
  ]) {
    rmSync(join(root, path), { recursive: true, force: true });
  }
  for (const entry of readdirSync(join(root, "var"))) {
    if (entry !== "lib") rmSync(join(root, "var", entry), { recursive: true, force: true });
  }
  for (const entry of readdirSync(join(root, "var", "lib"))) {
    if (entry !== "dpkg") rmSync(join(root, "var", "lib", entry), { recursive: true, force: true });
  }
  for (const entry of readdirSync(join(root, "var", "lib", "dpkg"))) {
    if (entry !== "status.d") rmSync(join(root, "var", "lib", "dpkg", entry), { recursive: true, force: true });
  }
  const docs = join(root, "usr", "share", "doc");
  for (const pkg of existsSync(docs) ? readdirSync(docs) : []) {
    for (const file of readdirSync(join(docs, pkg))) {
      if (file !== "copyright") rmSync(join(docs, pkg, file), { recursive: true, force: true });
    }
  }
}

function osRelease(suite: string): string {
  const machine = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
  if (new RegExp(`^VERSION_CODENAME=("?)${suite}\\1$`, "m").test(machine)) return machine;
  return `PRETTY_NAME="Debian GNU/Linux (${suite})"\nNAME="Debian GNU/Linux"\nVERSION_CODENAME=${suite}\nID=debian\n`;
}

/** The files a root without packages for them needs. */
function addSystemFiles(root: string, suite: string): void {
  mkdirSync(join(root, "etc"), { recursive: true });
  const home = DATA_DIR;
  writeFileSync(
    join(root, "etc", "passwd"),
    `root:x:0:0:root:/root:/sbin/nologin\nvirtualcluster:x:${IMAGE_UID}:${IMAGE_UID}:virtualcluster:${home}:/sbin/nologin\n`,
  );
  writeFileSync(join(root, "etc", "group"), `root:x:0:\nvirtualcluster:x:${IMAGE_UID}:\n`);
  // Without it glibc asks DNS before /etc/hosts (so "localhost" could go to a resolver).
  writeFileSync(join(root, "etc", "nsswitch.conf"), "passwd: files\ngroup: files\nhosts: files dns\n");
  writeFileSync(join(root, "etc", "os-release"), osRelease(suite));
  mkdirSync(join(root, "tmp"));
  chmodSync(join(root, "tmp"), 0o1777);
}

/** Writes `<stage>/debian.tar`; `work` is a scratch directory. */
export async function buildDebianLayer(source: DebianSource, work: string, out: string): Promise<void> {
  const extracted = join(work, "debian.mmdebstrap.tar");
  await runTool("mmdebstrap", [
    "--variant=extract",
    "--format=tar",
    "--quiet",
    `--architectures=${source.architecture}`,
    `--include=${PACKAGES.join(",")}`,
    `--extract-hook=${STATUS_HOOK}`,
    source.suite,
    extracted,
    source.sources,
  ]);
  const root = join(work, "debian-root");
  mkdirSync(root, { recursive: true });
  // Device nodes stay out (the container runtime provides /dev); the rest is extracted as the user who builds.
  await runTool("tar", [
    "--extract",
    `--file=${extracted}`,
    `--directory=${root}`,
    "--no-same-owner",
    "--exclude=./dev/*",
    "--exclude=./dev",
  ]);
  rmSync(extracted);
  prune(root);
  addSystemFiles(root, source.suite);
  // The data directory belongs to the user alone (the platform refuses one others may read).
  const data = `.${DATA_DIR}`;
  mkdirSync(join(root, data), { recursive: true });
  chmodSync(join(root, data), 0o700);
  await writeLayerTar(root, out, [
    { paths: ["."], exclude: [data] },
    { paths: [data], owner: IMAGE_UID, noRecursion: true },
  ]);
}
