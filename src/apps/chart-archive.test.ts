import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { type HelmRepoServer, startHelmRepoServer } from "../../test/support/helm-repo-server.ts";
import { ChartUnavailable, chooseChartVersion, fetchChartArchive } from "./chart-archive.ts";
import type { ChartVersion } from "./helm-index.ts";

const entries = (...versions: string[]): ChartVersion[] => versions.map((version) => ({ version, urls: [] }));
const chosen = (versions: ChartVersion[], wanted?: string) => chooseChartVersion(versions, wanted)?.version;

describe("chooseChartVersion()", () => {
  const versions = entries("1.10.0", "1.2.0", "2.0.0-rc.1", "1.2.3", "v0.9.0", "latest-build");

  it("chooseChartVersion() takes the newest release when no version is asked for, as Helm does", () => {
    assert.equal(chosen(versions), "1.10.0");
    assert.equal(chosen(versions, ""), "1.10.0");
  });

  it("chooseChartVersion() takes an exact version first, even one semver cannot read", () => {
    assert.equal(chosen(versions, "1.2.0"), "1.2.0");
    assert.equal(chosen(versions, "latest-build"), "latest-build");
    assert.equal(chosen(versions, "2.0.0-rc.1"), "2.0.0-rc.1");
  });

  it("chooseChartVersion() reads constraints, a comma meaning and, pre-releases only when asked for", () => {
    assert.equal(chosen(versions, "~1.2"), "1.2.3");
    assert.equal(chosen(versions, ">=1.2.0, <1.5"), "1.2.3");
    assert.equal(chosen(versions, "^1"), "1.10.0");
    assert.equal(chosen(versions, "<1"), "v0.9.0");
    assert.equal(chosen(versions, ">=2.0.0-0"), "2.0.0-rc.1");
    assert.equal(chosen(versions, "^3"), undefined);
    assert.equal(chosen(versions, "not a version"), undefined);
  });

  it("chooseChartVersion() never throws and only returns a version of the list", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 8 }), fc.string(), (list, wanted) => {
        const result = chooseChartVersion(entries(...list), wanted);
        assert.ok(result === undefined || list.includes(result.version));
      }),
    );
  });
});

describe("fetchChartArchive()", () => {
  const PASSWORD = "archive-pw-3c1e";
  let repo: HelmRepoServer;
  let elsewhere: Server;
  let elsewhereAuthorization: (string | undefined)[];
  before(async () => {
    repo = await startHelmRepoServer({
      username: "reader",
      password: PASSWORD,
      charts: [
        { name: "web", version: "1.0.0", readme: "one" },
        { name: "web", version: "1.1.0", readme: "one point one" },
        { name: "tampered", version: "1.0.0", digest: "0".repeat(64) },
      ],
    });
    elsewhereAuthorization = [];
    elsewhere = createServer((request, response) => {
      elsewhereAuthorization.push(request.headers.authorization);
      response.writeHead(302, { Location: `${repo.url}/charts/web-1.0.0.tgz` }).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  });
  after(async () => {
    await repo.close();
    await new Promise((resolve) => elsewhere.close(resolve));
  });
  const repository = (extra: Record<string, unknown> = {}) => ({
    name: "main",
    url: repo.url,
    username: "reader",
    password: PASSWORD,
    insecure: true,
    ...extra,
  });

  it("fetchChartArchive() fetches the chosen version's archive with the repository's credentials", async () => {
    const newest = await fetchChartArchive(repository(), "web");
    assert.equal(newest.version, "1.1.0");
    assert.match(gunzipSync(newest.archive).toString("latin1"), /one point one/);
    assert.equal((await fetchChartArchive(repository(), "web", "1.0.0")).version, "1.0.0");
  });

  it("fetchChartArchive() refuses an archive whose digest is not the index's", async () => {
    await assert.rejects(fetchChartArchive(repository(), "tampered"), (error: Error) => {
      assert.ok(error instanceof ChartUnavailable);
      assert.match(error.message, /is not the index's digest 0{64}/);
      return true;
    });
  });

  it("fetchChartArchive() says what is missing, and never names the password", async () => {
    const failures = [
      [fetchChartArchive(repository(), "nothing"), /repository "main" has no chart "nothing"/],
      [fetchChartArchive(repository(), "web", "^9"), /chart "web" of repository "main" has no version matching "\^9"/],
      [fetchChartArchive(repository({ password: "wrong" }), "web"), /answered 401 \(check the repository's username/],
    ] as const;
    for (const [attempt, message] of failures) {
      await assert.rejects(attempt, (error: Error) => {
        assert.ok(error instanceof ChartUnavailable, String(error));
        assert.match(error.message, message);
        assert.ok(!error.message.includes(PASSWORD));
        return true;
      });
    }
  });

  it("fetchChartArchive() sends credentials only to the repository's own host", async () => {
    const { port } = elsewhere.address() as AddressInfo;
    const index = `apiVersion: v1\nentries:\n  web:\n    - version: 1.0.0\n      urls: ["http://127.0.0.1:${port}/web.tgz"]\n`;
    const served = createServer((_request, response) => response.end(index));
    await new Promise<void>((resolve) => served.listen(0, "127.0.0.1", resolve));
    try {
      const own = `http://127.0.0.1:${(served.address() as AddressInfo).port}`;
      await assert.rejects(fetchChartArchive(repository({ url: own }), "web"), /answered 401/);
      assert.deepEqual(elsewhereAuthorization, [undefined], "the other host got no Authorization header");
    } finally {
      await new Promise((resolve) => served.close(resolve));
    }
  });
});
