import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { type HelmRepoServer, startHelmRepoServer } from "../../test/support/helm-repo-server.ts";
import { appsSettingsOf } from "../config/system-settings.ts";
import { AppsCatalog } from "./apps-catalog.ts";
import { compareVersions, parseHelmIndex } from "./helm-index.ts";

describe("AppsCatalog", () => {
  let repo: HelmRepoServer;
  before(async () => {
    repo = await startHelmRepoServer({
      username: "reader",
      password: "pw",
      charts: [
        { name: "nginx", version: "1.2.0", description: "Web server", readme: "# nginx\nServes the web." },
        { name: "nginx", version: "1.10.0", description: "Web server" },
        { name: "redis", version: "0.1.0-rc.1" },
      ],
    });
  });
  after(() => repo.close());

  const catalogOf = (apps: Record<string, unknown>) => {
    const settings = appsSettingsOf(apps);
    return new AppsCatalog({ settings: () => settings });
  };
  const repository = (extra: Record<string, unknown> = {}) => ({
    name: "main",
    url: repo.url,
    username: "reader",
    password: "pw",
    insecure: true,
    ...extra,
  });

  it("AppsCatalog reads index.yaml with basic auth and lists every chart as an app, newest version first", async () => {
    const catalog = catalogOf({ repositories: [repository()] });
    await catalog.refresh();
    const view = catalog.view();
    assert.equal(view.repositories[0].error, undefined);
    assert.deepEqual(
      view.apps.map((a) => [a.chart, a.version, a.versions]),
      [
        ["main/nginx", "1.10.0", ["1.10.0", "1.2.0"]],
        ["main/redis", "0.1.0-rc.1", ["0.1.0-rc.1"]],
      ],
    );
    assert.ok(repo.requests.every((r) => r.authorized));
  });

  it("AppsCatalog shows a repository's failure (wrong password, unverified certificate) without its password", async () => {
    const wrong = catalogOf({ repositories: [repository({ password: "nope" })] });
    await wrong.refresh();
    assert.match(
      wrong.view().repositories[0].error ?? "",
      /answered 401 \(check the repository's username and password\)/,
    );
    const strict = catalogOf({ repositories: [repository({ insecure: false })] });
    await strict.refresh();
    assert.match(strict.view().repositories[0].error ?? "", /certificate/);
    assert.doesNotMatch(JSON.stringify(strict.view()), /"pw"|nope/);
  });

  it("AppsCatalog puts predefined apps first with their clusters, and noDefault leaves out the rest", async () => {
    const catalog = catalogOf({
      noDefault: true,
      repositories: [repository()],
      predefinedApps: [
        { chart: "main/nginx", initialVersion: "1.2.0", clusters: ["east"], title: "Web" },
        { chart: "main/absent" },
      ],
    });
    await catalog.refresh();
    const apps = catalog.view().apps;
    assert.deepEqual(
      apps.map((a) => ({
        chart: a.chart,
        title: a.title,
        version: a.version,
        clusters: a.clusters,
        missing: a.missing,
      })),
      [
        { chart: "main/nginx", title: "Web", version: "1.2.0", clusters: ["east"], missing: undefined },
        { chart: "main/absent", title: "absent", version: undefined, clusters: [], missing: true },
      ],
    );
  });

  it("AppsCatalog reads a chart's README.md from its archive, and a refresh finds a new version", async () => {
    const catalog = catalogOf({ repositories: [repository()] });
    await catalog.refresh();
    assert.equal(await catalog.readme("main/nginx", "1.2.0"), "# nginx\nServes the web.");
    assert.equal(await catalog.readme("main/redis", undefined), undefined);
    repo.add({ name: "redis", version: "0.1.0" });
    await catalog.refresh();
    assert.equal(catalog.view().apps.find((a) => a.chart === "main/redis")?.version, "0.1.0");
  });

  it("AppsCatalog parses an index again only when its bytes changed", async () => {
    const still = await startHelmRepoServer({
      charts: [{ name: "web", version: "1.0.0" }],
      generated: "2026-01-01T00:00:00Z",
    });
    try {
      const catalog = catalogOf({ repositories: [{ name: "still", url: still.url, insecure: true }] });
      await catalog.refresh();
      await catalog.refresh();
      assert.equal(catalog.refreshes, 2);
      assert.equal(catalog.parses, 1, "the second read found the same bytes");
      assert.equal(catalog.view().apps.find((a) => a.chart === "still/web")?.version, "1.0.0");
      still.add({ name: "web", version: "1.1.0" });
      await catalog.refresh();
      assert.equal(catalog.parses, 2);
      assert.equal(catalog.view().apps.find((a) => a.chart === "still/web")?.version, "1.1.0");
    } finally {
      await still.close();
    }
  });
});

describe("parseHelmIndex()", () => {
  it("parseHelmIndex() resolves relative chart URLs against the repository and skips entries without a version", () => {
    const charts = parseHelmIndex(
      "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0, urls: [charts/a-1.0.0.tgz]}\n  - {name: a}\n",
      "https://repo.example.com/sub",
    );
    assert.deepEqual(charts[0].versions[0].urls, ["https://repo.example.com/sub/charts/a-1.0.0.tgz"]);
    assert.equal(charts[0].versions.length, 1);
  });

  it("parseHelmIndex() refuses an alias bomb and a document that is not a map", () => {
    const bomb = `a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nentries: {}\n`;
    assert.throws(() => parseHelmIndex(bomb, "https://r"));
    assert.throws(() => parseHelmIndex("- a\n", "https://r"));
  });

  it("parseHelmIndex() never throws anything but an Error on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        try {
          parseHelmIndex(text, "https://r");
        } catch (error) {
          assert.ok(error instanceof Error);
        }
      }),
    );
  });

  it("compareVersions() orders by semantic version, a pre-release before its release", () => {
    const sorted = ["1.10.0", "1.2.0", "1.2.0-rc.1", "v2.0.0", "junk"].sort(compareVersions);
    assert.deepEqual(sorted, ["1.2.0-rc.1", "1.2.0", "1.10.0", "v2.0.0", "junk"]);
  });
});
