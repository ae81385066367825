// The documentation links nothing outside the repository: every Markdown link is to a file in it or to a heading of
// the page, and no web address that GitHub would turn into a link (outside code) appears but the local and example
// ones the walkthroughs use. And its claims about the repository stay true as the code moves: the files it names
// exist, the `npm run` scripts it names exist, and BENCHMARKS.md opens with its summary table, whose commands run a
// bench that exists with flags that bench parses.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const listed = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.md"], {
  cwd: REPO,
  encoding: "utf8",
});
const PAGES = listed.stdout.split("\n").filter((file) => file !== "" && existsSync(join(REPO, file)));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");

function anchors(text: string): Set<string> {
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1])));
}

/** The page without its fenced code blocks and code spans (commands, output and values, not links). */
const prose = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");

describe("documentation links", { skip: listed.status !== 0 && "not a git checkout" }, () => {
  it("every Markdown link points into the repository (a file or a heading)", () => {
    assert.ok(PAGES.includes("README.md"));
    const problems: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(REPO, page), "utf8");
      for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const [path, anchor] = target.split("#");
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
          problems.push(`${page}: ${target} is outside the repository`);
          continue;
        }
        const file = path === "" ? join(REPO, page) : resolve(dirname(join(REPO, page)), path);
        if (relative(REPO, file).startsWith("..") || !existsSync(file)) {
          problems.push(`${page}: ${target} is not a file of the repository`);
        } else if (anchor && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor)) {
          problems.push(`${page}: ${target} names no heading`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it("no page links a web address other than local and example ones", () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      for (const [url] of prose(readFileSync(join(REPO, page), "utf8")).matchAll(/https?:\/\/[^\s)`"'<>]+/g)) {
        if (!/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\]|([\w-]+\.)*example\.(com|org))([:/]|$)/.test(url)) {
          problems.push(`${page}: ${url}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
});

const tracked = spawnSync("git", ["ls-files"], { cwd: REPO, encoding: "utf8" }).stdout.split("\n").filter(Boolean);
const read = (file: string) => readFileSync(join(REPO, file), "utf8");

/** Pages that describe the code as it is now (CHANGELOG and the benchmark history describe it as it was). */
const CURRENT_PAGES = PAGES.filter(
  (page) =>
    ["README.md", "SECURITY.md", "BENCHMARKS.md", "docs/architecture.md", "deploy/README.md"].includes(page) ||
    (page.startsWith("src/") && page.endsWith(".md")),
);

/** Source and document file names a page mentions (`src/http/watch.ts`, `store.ts`), placeholders left out. */
function namedFiles(text: string): Set<string> {
  return new Set(text.match(/(?<![\w./<>*-])\w[\w./-]*\.(?:ts|tsx|mjs|md)\b/g) ?? []);
}

/** A name stands for a file when it is a path from the root, src/, console/src/ or the page, or ends a tracked path. */
function fileExists(name: string, page: string): boolean {
  const roots = [REPO, join(REPO, "src"), join(REPO, "console", "src"), dirname(join(REPO, page))];
  return roots.some((root) => existsSync(join(root, name))) || tracked.some((file) => file.endsWith(`/${name}`));
}

const SUMMARY_COLUMNS = ["goal (issue)", "current figure", "met", "baseline (same run)", "measured", "reproduce"];

/** The cells of each row of the first table in the text, header first. */
function firstTable(text: string): { start: number; rows: string[][] } {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[][] = [];
  for (let i = start; i >= 0 && i < lines.length && lines[i].startsWith("|"); i++) {
    if (/^\|[-|: ]+\|$/.test(lines[i])) continue;
    rows.push(
      lines[i]
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    );
  }
  return { start, rows };
}

/** What a command line runs: the file and its arguments (`npm run bench -- …` is bench/run.ts). */
function commandTarget(command: string): { file: string; args: string[] } | undefined {
  const words = command.split(/\s+/).filter((word) => !/^[A-Z_]+=/.test(word));
  if (words[0] === "nice") words.splice(0, words[1] === "-n" ? 3 : 2);
  if (words.join(" ").startsWith("npm run bench")) return { file: "bench/run.ts", args: words.slice(4) };
  if (words[0] === "npx") words.shift();
  if (words[0] !== "node") return undefined;
  const at = words.findIndex((word) => word.endsWith(".ts"));
  return at < 0 ? undefined : { file: words[at], args: words.slice(at + 1) };
}

/** Whether a bench reads the flag: a parseArgs option of that name, or the literal "--flag" it looks for. */
function parsesFlag(source: string, flag: string): boolean {
  return source.includes(`"--${flag}"`) || new RegExp(`(^|[\\s{,])"?${flag}"?\\s*:\\s*\\{\\s*type:`, "m").test(source);
}

const SCENARIOS = readdirSync(join(REPO, "bench", "scenarios")).flatMap((file) =>
  [...read(`bench/scenarios/${file}`).matchAll(/\bname: "([a-z-]+)"/g)].map((match) => match[1]),
);

/** Problems with one command of BENCHMARKS.md: its file, its flags, and `--only`'s scenario names. */
function commandProblems(command: string): string[] {
  const target = commandTarget(command);
  if (!target) return [];
  if (!existsSync(join(REPO, target.file))) return [`${command}: ${target.file} does not exist`];
  if (!target.file.startsWith("bench/")) return [];
  const source = read(target.file);
  const problems: string[] = [];
  target.args.forEach((arg, i) => {
    const flag = /^--([a-z][a-z-]*)$/.exec(arg)?.[1];
    if (flag && !parsesFlag(source, flag)) problems.push(`${command}: ${target.file} does not parse --${flag}`);
    if (flag === "only" && target.file === "bench/run.ts") {
      for (const name of (target.args[i + 1] ?? "").split(",")) {
        if (!SCENARIOS.includes(name)) problems.push(`${command}: no scenario named ${name} in bench/scenarios/`);
      }
    }
  });
  return problems;
}

const codeSpans = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]);

describe("documentation claims", { skip: listed.status !== 0 && "not a git checkout" }, () => {
  it("every file a current page names exists (a path from the root, src/ or the page, or the end of one)", () => {
    const problems: string[] = [];
    for (const page of CURRENT_PAGES) {
      for (const name of namedFiles(read(page))) {
        if (!fileExists(name, page)) problems.push(`${page}: ${name}`);
      }
    }
    assert.ok(CURRENT_PAGES.includes("docs/architecture.md"));
    assert.deepEqual(problems, []);
  });

  it("every `npm run` script the pages name is in package.json", () => {
    const scripts = Object.keys(JSON.parse(read("package.json")).scripts);
    const problems: string[] = [];
    for (const page of [...CURRENT_PAGES, "CONTRIBUTING.md"]) {
      for (const [, script] of read(page).matchAll(/npm run ([\w:-]+)/g)) {
        if (!scripts.includes(script)) problems.push(`${page}: npm run ${script}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("BENCHMARKS.md opens with the summary table, before any section", () => {
    const text = read("BENCHMARKS.md");
    const { start, rows } = firstTable(text);
    const firstSection = text.split("\n").findIndex((line) => line.startsWith("## "));
    assert.ok(start > 0 && (firstSection < 0 || start < firstSection), "the first table comes before any ## section");
    assert.deepEqual(rows[0], SUMMARY_COLUMNS);
    assert.ok(rows.length > 20, "a row per goal");
    assert.ok(text.includes("](docs/benchmarks-history.md)"), "it links the history");
  });

  it("every summary row with a figure names the command that measures it (or is measured as the row above)", () => {
    const { rows } = firstTable(read("BENCHMARKS.md"));
    const [goal, figure, reproduce] = ["goal (issue)", "current figure", "reproduce"].map((name) =>
      SUMMARY_COLUMNS.indexOf(name),
    );
    const problems = rows
      .slice(1)
      .filter((row) => !row[figure].startsWith("not recorded"))
      .filter((row) => codeSpans(row[reproduce]).length === 0 && row[reproduce] !== "as above")
      .map((row) => `${row[goal]}: no command`);
    assert.deepEqual(problems, []);
  });

  it("every command in BENCHMARKS.md runs a file that exists, a bench with flags it parses", () => {
    const problems = codeSpans(read("BENCHMARKS.md")).flatMap(commandProblems);
    assert.deepEqual(problems, []);
  });

  it("every bench in bench/ has a command in BENCHMARKS.md (but the helpers other benches start)", () => {
    const text = read("BENCHMARKS.md");
    const benches = readdirSync(join(REPO, "bench")).filter((file) => file.endsWith(".ts"));
    const sources = benches.map((file) => read(`bench/${file}`)).join("\n");
    const helpers = benches.filter((file) => sources.includes(`./${file}`));
    const run = codeSpans(text).flatMap((command) => commandTarget(command)?.file ?? []);
    const missing = benches.filter((file) => !helpers.includes(file) && !run.includes(`bench/${file}`));
    assert.deepEqual(missing, []);
  });
});
