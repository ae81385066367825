import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { consoleContentSecurityPolicy, cspSource } from "./console-csp.ts";

const directive = (policy: string, name: string) =>
  policy
    .split("; ")
    .find((d) => d.startsWith(`${name} `))
    ?.split(" ")
    .slice(1);

describe("consoleContentSecurityPolicy()", () => {
  it("consoleContentSecurityPolicy() allows scripts and styles only from the platform and the configured URLs", () => {
    const policy = consoleContentSecurityPolicy({
      customJavaScript: ["https://cdn.example.com/widget.js"],
      customCss: ["https://cdn.example.com/theme.css?v=2"],
    });
    assert.deepEqual(directive(policy, "script-src"), ["'self'", "https://cdn.example.com/widget.js"]);
    assert.deepEqual(directive(policy, "style-src"), ["'self'", "https://cdn.example.com/theme.css"]);
    assert.deepEqual(directive(policy, "connect-src"), ["'self'", "https:"]);
    assert.deepEqual(directive(policy, "img-src"), ["'self'", "data:", "https:"]);
    assert.deepEqual(directive(policy, "frame-ancestors"), ["'none'"]);
    assert.deepEqual(directive(policy, "object-src"), ["'none'"]);
  });

  it("consoleContentSecurityPolicy() with externalURLs.block allows only the allow list", () => {
    const policy = consoleContentSecurityPolicy({
      customJavaScript: ["https://elsewhere.example.com/x.js"],
      externalURLs: { block: true, allow: ["https://api.example.com/", "monitoring", "javascript:alert(1)"] },
    });
    for (const name of ["script-src", "style-src", "connect-src"]) {
      assert.deepEqual(directive(policy, name), ["'self'", "https://api.example.com"], name);
    }
    assert.deepEqual(directive(policy, "img-src"), ["'self'", "data:", "https://api.example.com"]);
    assert.doesNotMatch(policy, /elsewhere/);
  });

  it("consoleContentSecurityPolicy() ignores allow without block", () => {
    const policy = consoleContentSecurityPolicy({ externalURLs: { block: false, allow: ["https://api.example.com"] } });
    assert.deepEqual(directive(policy, "connect-src"), ["'self'", "https:"]);
  });
});

describe("cspSource()", () => {
  it("cspSource() keeps origin and path of http(s) URLs and refuses anything that could break the policy", () => {
    assert.equal(cspSource("https://cdn.example.com/a/b.js?x=1#y"), "https://cdn.example.com/a/b.js");
    assert.equal(cspSource("https://cdn.example.com/"), "https://cdn.example.com");
    assert.equal(cspSource("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080/x");
    assert.equal(cspSource("https://cdn.example.com/a;script-src"), undefined, "a ; would start a directive");
    assert.equal(cspSource("https://cdn.example.com/a,b"), undefined, "a , would start a policy");
    assert.equal(cspSource("data:text/html,hi"), undefined);
    assert.equal(cspSource("javascript:alert(1)"), undefined);
    assert.equal(cspSource("https://user:pw@cdn.example.com/"), undefined);
    assert.equal(cspSource("not a url"), undefined);
    assert.equal(cspSource(42), undefined);
  });
});
