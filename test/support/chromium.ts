// Debian's Chromium driven by playwright-core (no browser download: /usr/bin/chromium, which .ci/run installs), with
// the flags this machine needs (no background networking, no sandbox as root), and the axe-core accessibility check.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/**
 * How long a page action waits for its condition (an element, a navigation). Generous on purpose: it only ends a
 * test that is already broken, and a loaded CI machine can take many seconds to paint a page.
 */
export const PAGE_WAIT_MS = 180_000;
export const chromiumAvailable = existsSync(CHROMIUM);
/** For test({ skip }): a visible reason where Chromium is missing. */
export const chromiumSkip = chromiumAvailable
  ? false
  : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run does)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2 A and AA rules, best practices). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, html: n.html.slice(0, 200) })),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Fills and sends the console's password form. */
export async function loginThroughConsole(page: Page, username: string, password: string): Promise<void> {
  await page.getByRole("textbox", { name: "Username" }).fill(username);
  await page.getByRole("textbox", { name: "Password" }).fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}
