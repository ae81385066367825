// The documentation links nothing outside the repository: every Markdown link is to a file in it or to a heading of
// the page, and no web address that GitHub would turn into a link (outside code) appears but the local and example
// ones the walkthroughs use.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
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
