// The application layer, /opt/virtualcluster: what `npm pack` ships (bin, the built JavaScript in dist/ with the web
// console, package.json, LICENSE), built here from the checkout into the staging directory, plus the production
// dependencies package-lock.json lists, copied from node_modules without what nothing runs (type declarations,
// source maps, TypeScript sources, documentation; licences stay), and the health check.

import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { writeLayerTar } from "./layer-tar.ts";
import { runTool } from "./run-tool.ts";

export const APP_DIR = "/opt/virtualcluster";

interface LockedPackage {
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
}

/**
 * node_modules paths of the packages a production install has (Node itself comes in its own layer). An optional
 * package for another platform is not installed; any other missing one means node_modules is behind the lock file.
 */
export function productionPackages(repo: string): string[] {
  const lock = JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockedPackage>;
  };
  const wanted = Object.entries(lock.packages).filter(
    ([path, entry]) =>
      path !== "" &&
      !entry.dev &&
      !entry.link &&
      !/(^|\/)node_modules\/(node-(linux|darwin|win)-[^/]+|@types\/[^/]+)$/.test(path),
  );
  const missing = wanted.filter(([path, entry]) => !entry.optional && !existsSync(join(repo, path)));
  if (missing.length > 0) {
    throw new Error(`${missing[0][0]} is in package-lock.json but not installed: run \`npm install\` first`);
  }
  return wanted.map(([path]) => path).filter((path) => existsSync(join(repo, path)));
}

const LICENCE = /^(licen[cs]e|copying|notice|authors)([.-].*)?$/i;
const NOT_RUN = /\.(d\.[cm]?ts|[cm]?ts|map|md|markdown)$/i;

/** Whether a file or folder of a dependency goes into the image. */
export function shipsInImage(path: string): boolean {
  const name = basename(path);
  if (LICENCE.test(name)) return true;
  if (name === ".github" || name === ".bin") return false;
  return !NOT_RUN.test(name);
}

function copyDependencies(repo: string, app: string): void {
  for (const path of productionPackages(repo)) {
    const from = join(repo, path);
    cpSync(from, join(app, path), {
      recursive: true,
      // A package's own node_modules holds packages of their own lock entries (copied, or left out, by them).
      filter: (source) => shipsInImage(source) && source !== join(from, "node_modules"),
    });
  }
}

/** Compiles src/ and the console into `app` (the image's APP_DIR) with the checkout's TypeScript and Vite. */
async function buildJavaScript(repo: string, app: string): Promise<void> {
  const bin = (name: string) => join(repo, "node_modules", name);
  await Promise.all([
    runTool(process.execPath, [bin("typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", join(app, "dist")], {
      cwd: repo,
    }),
    runTool(
      process.execPath,
      [bin("vite/bin/vite.js"), "build", "--config", "container/console.vite.config.ts", "--logLevel", "warn"],
      { cwd: repo, env: { ...process.env, VIRTUALCLUSTER_CONSOLE_OUT_DIR: join(app, "dist", "console") } },
    ),
  ]);
}

/** Writes the layer to `out`; `work` is a scratch directory. */
export async function buildAppLayer(repo: string, work: string, out: string): Promise<void> {
  const root = join(work, "app-root");
  const app = join(root, APP_DIR);
  mkdirSync(app, { recursive: true });
  await buildJavaScript(repo, app);
  for (const file of ["bin/virtualcluster.js", "package.json", "LICENSE"]) cpSync(join(repo, file), join(app, file));
  cpSync(join(repo, "container", "healthcheck.mjs"), join(app, "healthcheck.mjs"));
  copyDependencies(repo, app);
  await writeLayerTar(root, out, [{ paths: ["."] }]);
}
