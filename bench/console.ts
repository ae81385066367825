// The web console (issue 17), in one run, in Debian's Chromium on loopback:
//   1. the initial JavaScript of the console (the entry chunk and the chunks it preloads), gzipped as served, and
//      all the JavaScript the browser actually transfers to show the Users page (its lazy page chunk included);
//   2. the time to an interactive Users page: from the navigation's start to the first user row rendered from the
//      API (the session cookie already set), read in the page with performance.now(); against a baseline measured
//      in the same run: the same browser loading a static HTML table of the same users from a bare node:https
//      server (TLS, HTML parse, first paint: the floor any page pays). Rounds alternate baseline and console;
//   3. the same for the Overview (the landing page since issue 31): to its first project link.
//
//   node bench/console.ts [--rounds n] [--users n]

import { readFile } from "node:fs/promises";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { launchChromium, loginThroughConsole } from "../test/support/chromium.ts";
import { testTls } from "../test/support/test-ca.ts";
import { GROUP_VERSION } from "./lib/api.ts";
import { startBenchPlatform } from "./lib/platform.ts";
import { formatMs, formatRatio, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "7" }, users: { type: "string", default: "50" } },
});
const rounds = Number(values.rounds);
const users = Number(values.users);
// The platform runs pinned to CPU 0 (startBenchPlatform); the browser is left unpinned, as a user's browser runs on
// a machine of its own (pinned to one core with this process, Chromium's processes queue behind each other).
const log = (message: string) => process.stderr.write(`${message}\n`);

// 1. Sizes from the build.
const dist = new URL("../dist/console/", import.meta.url).pathname;
const index = await readFile(join(dist, "index.html"), "utf8");
const initial = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
let initialGzip = 0;
let initialRaw = 0;
for (const path of initial) {
  const body = await readFile(join(dist, path));
  initialRaw += body.length;
  initialGzip += gzipSync(body, { level: 9 }).length;
}

// 2. Time to an interactive Users page.
const platform = await startBenchPlatform();
for (let i = 0; i < users; i++) {
  await platform.api.expect(201, "POST", `/apis/${GROUP_VERSION}/users`, {
    apiVersion: GROUP_VERSION,
    kind: "User",
    metadata: { name: `user-${String(i).padStart(3, "0")}` },
    spec: { username: `user-${i}`, displayName: `User ${i}`, email: `user-${i}@example.com` },
  });
}
const password = (await readFile(join(platform.process.dataDir, "admin-password"), "utf8")).trim();

const tls = await testTls("bench baseline");
const rows = Array.from({ length: 20 }, (_, i) => `<tr><td>user-${i}</td><td>User ${i}</td></tr>`).join("");
const staticPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Users</title></head><body><h1>Users</h1><table aria-label="Users"><tbody>${rows}</tbody></table></body></html>`;
const baseline = createServer({ cert: tls.certPem, key: tls.keyPem }, (_req, res) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(staticPage);
});
await new Promise<void>((resolve) => baseline.listen(0, "127.0.0.1", resolve));
const baselineUrl = `https://127.0.0.1:${(baseline.address() as AddressInfo).port}/`;

const browser = await launchChromium();
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
// Records when the first row of the Users table appears (runs before any page script; not subject to the CSP).
const MARK_USERS = `new MutationObserver((_, observer) => {
  if (document.querySelector('table[aria-label="Users"] td')) {
    globalThis.__usersShown = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });`;
await context.addInitScript({ content: MARK_USERS });
// And when the Overview's first project link appears.
const MARK_OVERVIEW = `new MutationObserver((_, observer) => {
  if (document.querySelector('main a[href^="/projects/"]')) {
    globalThis.__overviewShown = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });`;
await context.addInitScript({ content: MARK_OVERVIEW });
const page = await context.newPage();
await page.goto(`${platform.url}/login?return=%2Fusers`);
await loginThroughConsole(page, "admin", password);
await page.waitForURL((url) => url.pathname === "/users");

async function timed(url: string, mark = "__usersShown"): Promise<number> {
  await page.goto(url, { waitUntil: "commit" });
  await page.waitForFunction((name) => (globalThis as Record<string, unknown>)[name] !== undefined, mark, {
    timeout: 30_000,
  });
  return page.evaluate((name) => ((globalThis as Record<string, unknown>)[name] as number) ?? Number.NaN, mark);
}

// Warm both (the browser's HTTP cache keeps the hashed bundle, as a returning user's would).
await timed(baselineUrl);
await timed(`${platform.url}/users`);
await timed(`${platform.url}/`, "__overviewShown");
const base: number[] = [];
const consoleMs: number[] = [];
const overviewMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  base.push(await timed(baselineUrl));
  consoleMs.push(await timed(`${platform.url}/users`));
  overviewMs.push(await timed(`${platform.url}/`, "__overviewShown"));
  log(
    `round ${round + 1}: baseline ${formatMs(base.at(-1) ?? 0)} ms, users ${formatMs(consoleMs.at(-1) ?? 0)} ms, overview ${formatMs(overviewMs.at(-1) ?? 0)} ms`,
  );
}
// A cold load (empty cache): every byte of the bundle over the wire.
const cold = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
await cold.addCookies((await context.cookies()).filter((c) => c.name === "vcp_session"));
await cold.addInitScript({ content: MARK_USERS });
const coldPage = await cold.newPage();
await coldPage.goto(`${platform.url}/users`, { waitUntil: "commit" });
await coldPage.waitForFunction(() => (globalThis as { __usersShown?: number }).__usersShown !== undefined);
const coldMs = await coldPage.evaluate(() => (globalThis as { __usersShown?: number }).__usersShown ?? Number.NaN);
const transferred = Number(
  await coldPage.evaluate(
    'performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".js")).reduce((sum, e) => sum + e.encodedBodySize, 0)',
  ),
);

await browser.close();
baseline.close();
await platform.stop();

const sorted = (list: number[]) => [...list].sort((a, b) => a - b);
const median = (list: number[]) => percentile(sorted(list), 50);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log("## Web console (bench/console.ts)");
console.log(
  `- initial JavaScript (entry + preloaded chunks, ${initial.length} files): ${kb(initialGzip)} gzipped (${kb(initialRaw)} raw); goal <= 300 KB: ${initialGzip <= 300 * 1024 ? "MET" : "NOT MET"}`,
);
console.log(`- JavaScript transferred for a cold Users page (gzip): ${kb(transferred)}`);
console.log(
  `- time to an interactive Users page (${users} users, warm cache), median of ${rounds}: ${formatMs(median(consoleMs))} ms (best ${formatMs(Math.min(...consoleMs))} ms); goal < 1 s: ${median(consoleMs) < 1000 ? "MET" : "NOT MET"}`,
);
console.log(
  `- baseline (static HTML table from a bare node:https server), median: ${formatMs(median(base))} ms; ratio console/baseline ${formatRatio(median(consoleMs) / median(base))}`,
);
console.log(
  `- time to an interactive Overview (the landing page), median of ${rounds}: ${formatMs(median(overviewMs))} ms (best ${formatMs(Math.min(...overviewMs))} ms); ratio to the baseline ${formatRatio(median(overviewMs) / median(base))}`,
);
console.log(`- cold load (empty cache) to the first user row: ${formatMs(coldMs)} ms`);
