import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { consolePage, consoleSettings, isConsolePage, isConsolePageRequest } from "./console-routes.ts";

const TEMPLATE =
  '<!doctype html><html><head><link rel="icon" href="/assets/favicon.svg" /><script type="module" src="/assets/index.js"></script></head><body></body></html>';

describe("console routes", () => {
  it("consolePage() adds the favicon, style sheets after ours and scripts, escaping attributes", () => {
    const page = consolePage(TEMPLATE, {
      faviconURL: 'https://cdn.example.com/icon.png?a=1&b="x"',
      customCss: ["https://cdn.example.com/theme.css", "javascript:alert(1)"],
      customJavaScript: ["https://cdn.example.com/widget.js"],
    });
    assert.doesNotMatch(page, /favicon\.svg/, "the built-in icon is replaced");
    assert.match(page, /<link rel="icon" href="https:\/\/cdn\.example\.com\/icon\.png\?a=1&amp;b=&quot;x&quot;">/);
    assert.match(page, /<link rel="stylesheet" href="https:\/\/cdn\.example\.com\/theme\.css">/);
    assert.doesNotMatch(page, /javascript:/);
    assert.match(page, /<script defer src="https:\/\/cdn\.example\.com\/widget\.js"><\/script>\n<\/head>/);
    assert.equal(consolePage(TEMPLATE, {}), TEMPLATE.replace("</head>", "\n</head>"));
  });

  it("consoleSettings() passes branding, defaults the nav bar position and the version", () => {
    const settings = consoleSettings(
      {
        logoURL: "https://cdn.example.com/logo.svg",
        primaryColor: "#8a2be2",
        customJavaScript: ["https://cdn.example.com/x.js"],
        navBarButtons: [{ text: "Docs", link: "https://docs.example.com" }, { text: "Up", position: "TopStart" }, 3],
      },
      "v1.2.3",
    );
    assert.deepEqual(settings, {
      apps: false,
      costControl: false,
      logoURL: "https://cdn.example.com/logo.svg",
      primaryColor: "#8a2be2",
      platformVersion: "v1.2.3",
      navBarButtons: [
        { text: "Docs", link: "https://docs.example.com", icon: "", position: "BottomEnd" },
        { text: "Up", link: "", icon: "", position: "TopStart" },
      ],
    });
    assert.equal(consoleSettings({ platformVersion: "2026.11" }, "v1").platformVersion, "2026.11");
    const on = consoleSettings({}, "v1", { releaseChannel: "stable", apps: true, costControl: true });
    assert.deepEqual(
      [on.releaseChannel, on.apps, on.costControl],
      ["stable", true, true],
      "the Config's pages to offer",
    );
  });

  it("isConsolePageRequest() is true for browser navigations to console pages only", () => {
    assert.equal(isConsolePage("/"), true);
    assert.equal(isConsolePage("/users/alice/access-keys"), true);
    assert.equal(isConsolePage("/usersx"), false);
    assert.equal(isConsolePage("/apis"), false);
    assert.equal(isConsolePage("//users"), false);
    const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };
    assert.equal(isConsolePageRequest("/login", html), true);
    assert.equal(isConsolePageRequest("/login", { accept: "application/json" }), false);
    assert.equal(isConsolePageRequest("/", {}), false);
    assert.equal(isConsolePageRequest("/version", html), false);
  });
});
