// `npm run image`: builds the virtualcluster-platform image with podman from Debian's packages and this checkout
// (see Containerfile). The image is tagged with the package version and with `inputs-<hash>` of everything it is
// made from (image-inputs.ts): when an image with that tag exists nothing is built, so repeated runs (and the test
// suite's container tests) build only after a change.
//
//   npm run image [-- --force] [--json] [--debian-suite SUITE --debian-sources FILE] [--source URL]

import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildAppLayer } from "./app-layer.ts";
import { buildDebianLayer, type DebianSource, debianArchitecture, machineDebianSource } from "./debian-layer.ts";
import { imageInputsHash } from "./image-inputs.ts";
import { buildNodeLayer, pinnedNode } from "./node-layer.ts";
import { runTool } from "./run-tool.ts";

export const IMAGE_REPOSITORY = "localhost/virtualcluster-platform";
const REPO = fileURLToPath(new URL("..", import.meta.url));
/** Images of earlier inputs kept besides the new one (others' checkouts on this machine may still use them). */
const KEEP_EARLIER = 3;

export interface BuiltImage {
  /** `<repository>:inputs-<hash>`: the image of exactly these inputs. */
  ref: string;
  /** `<repository>:<package version>`. */
  versionRef: string;
  /** Uncompressed size in bytes, as podman reports it. */
  sizeBytes: number;
  /** False when an image of the same inputs existed. */
  built: boolean;
  buildSeconds?: number;
}

export interface BuildImageOptions {
  repo?: string;
  force?: boolean;
  debian?: DebianSource;
  /** org.opencontainers.image.source (default: package.json's repository, else the git remote origin). */
  source?: string;
}

const packageJson = (repo: string) =>
  JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
    version: string;
    repository?: string | { url?: string };
  };

async function git(repo: string, args: string[]): Promise<string | undefined> {
  try {
    return (await runTool("git", ["-C", repo, ...args])).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function imageSize(ref: string): Promise<number | undefined> {
  try {
    return Number((await runTool("podman", ["image", "inspect", "--format", "{{.Size}}", ref])).trim());
  } catch {
    return undefined;
  }
}

async function labels(repo: string, source: string | undefined): Promise<string[]> {
  const manifest = packageJson(repo);
  const repository = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  const values: Record<string, string | undefined> = {
    version: manifest.version,
    revision: await git(repo, ["rev-parse", "HEAD"]),
    created: new Date().toISOString(),
    source: source ?? repository ?? (await git(repo, ["remote", "get-url", "origin"])),
  };
  return Object.entries(values).flatMap(([key, value]) =>
    value === undefined ? [] : ["--label", `org.opencontainers.image.${key}=${value}`],
  );
}

/** Removes images of earlier inputs beyond the newest KEEP_EARLIER; one a container still uses stays. */
async function pruneEarlier(keep: string): Promise<void> {
  const listing = await runTool("podman", [
    "images",
    "--format",
    "{{.Repository}}:{{.Tag}}",
    "--sort",
    "created",
    IMAGE_REPOSITORY,
  ]);
  const earlier = listing.split("\n").filter((ref) => ref.startsWith(`${IMAGE_REPOSITORY}:inputs-`) && ref !== keep);
  for (const ref of earlier.slice(KEEP_EARLIER)) {
    await runTool("podman", ["rmi", ref]).catch(() => undefined);
  }
}

/** Builds the image unless one of the same inputs exists; tags it with the package version either way. */
export async function buildImage(options: BuildImageOptions = {}): Promise<BuiltImage> {
  const repo = options.repo ?? REPO;
  const debian = options.debian ?? machineDebianSource();
  const node = pinnedNode(repo);
  const hash = imageInputsHash(repo, [debian.suite, debian.architecture, readFileSync(debian.sources, "utf8")]);
  const ref = `${IMAGE_REPOSITORY}:inputs-${hash.slice(0, 16)}`;
  const versionRef = `${IMAGE_REPOSITORY}:${packageJson(repo).version}`;
  const existing = options.force ? undefined : await imageSize(ref);
  if (existing !== undefined) {
    await runTool("podman", ["tag", ref, versionRef]);
    return { ref, versionRef, sizeBytes: existing, built: false };
  }
  const started = process.hrtime.bigint();
  const stage = mkdtempSync(join(tmpdir(), "virtualcluster-image-"));
  try {
    await Promise.all([
      buildDebianLayer(debian, stage, join(stage, "debian.tar")),
      buildNodeLayer(node, stage, join(stage, "node.tar")),
      buildAppLayer(repo, stage, join(stage, "app.tar")),
    ]);
    cpSync(join(repo, "container", "Containerfile"), join(stage, "Containerfile"));
    await runTool("podman", [
      "build",
      "--format",
      "docker",
      "--layers",
      "--tag",
      ref,
      "--tag",
      versionRef,
      ...(await labels(repo, options.source)),
      "--file",
      join(stage, "Containerfile"),
      stage,
    ]);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const buildSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pruneEarlier(ref);
  return { ref, versionRef, sizeBytes: (await imageSize(ref)) ?? 0, built: true, buildSeconds };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      force: { type: "boolean" },
      json: { type: "boolean" },
      "debian-suite": { type: "string" },
      "debian-sources": { type: "string" },
      source: { type: "string" },
    },
  });
  const suite = values["debian-suite"];
  const sources = values["debian-sources"];
  if (Boolean(suite) !== Boolean(sources)) throw new Error("--debian-suite and --debian-sources go together");
  const debian = suite && sources ? { suite, sources, architecture: debianArchitecture() } : undefined;
  const image = await buildImage({ force: values.force, debian, source: values.source });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(image)}\n`);
    return;
  }
  const size = `${(image.sizeBytes / 1e6).toFixed(0)} MB uncompressed`;
  process.stdout.write(
    image.built
      ? `Built ${image.versionRef} (${image.ref}) in ${image.buildSeconds?.toFixed(0)} s: ${size}\n`
      : `Up to date: ${image.versionRef} (${image.ref}): ${size}\n`,
  );
}

if (import.meta.main) {
  main().catch((error: Error) => {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(1);
  });
}
