// A Helm chart repository for tests: HTTPS (a throwaway CA) serving index.yaml and chart archives (.tgz with
// Chart.yaml, values.yaml, README.md and any templates), with optional basic auth, as `helm repo add` expects (the repository format of
// https://helm.sh/docs/topics/chart_repository/). Charts can be added while it runs, so a refresh finds them.

import { createHash } from "node:crypto";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { stringify } from "yaml";
import { testTls } from "./test-ca.ts";

export interface TestChart {
  name: string;
  version: string;
  appVersion?: string;
  description?: string;
  readme?: string;
  /** values.yaml (default `replicaCount: 1`). */
  values?: string;
  /** More files of the chart by path inside it, e.g. templates/configmap.yaml. */
  files?: Record<string, string>;
  /** The index's digest of the archive (default: its sha256, as `helm repo index` writes it). */
  digest?: string;
}

/** A ustar archive of the files (path -> text). */
export function tarOf(files: Record<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, text] of Object.entries(files)) {
    const body = Buffer.from(text, "utf8");
    const header = Buffer.alloc(512);
    header.write(path, 0, 100, "utf8");
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
    header.write("00000000000\0", 136);
    header.write("        ", 148);
    header.write("0", 156);
    header.write("ustar\0", 257);
    header.write("00", 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export interface HelmRepoServer {
  url: string;
  caPem: string;
  /** Requests seen: path and whether they carried the right credentials. */
  requests: { path: string; authorized: boolean }[];
  add(chart: TestChart): void;
  close(): Promise<void>;
}

export async function startHelmRepoServer(
  options: {
    username?: string;
    password?: string;
    charts?: TestChart[];
    /** The index's `generated` time; by default the time of each request, so every read differs. */
    generated?: string;
  } = {},
): Promise<HelmRepoServer> {
  const tls = await testTls("chart repository");
  const charts: TestChart[] = [...(options.charts ?? [])];
  const requests: { path: string; authorized: boolean }[] = [];
  const expected = options.username
    ? `Basic ${Buffer.from(`${options.username}:${options.password ?? ""}`).toString("base64")}`
    : undefined;
  const archive = (chart: TestChart) =>
    gzipSync(
      tarOf({
        [`${chart.name}/Chart.yaml`]: stringify({ apiVersion: "v2", name: chart.name, version: chart.version }),
        [`${chart.name}/values.yaml`]: chart.values ?? "replicaCount: 1\n",
        ...(chart.readme ? { [`${chart.name}/README.md`]: chart.readme } : {}),
        ...Object.fromEntries(Object.entries(chart.files ?? {}).map(([path, text]) => [`${chart.name}/${path}`, text])),
      }),
    );
  const index = () => {
    const entries: Record<string, unknown[]> = {};
    for (const chart of charts) {
      entries[chart.name] ??= [];
      entries[chart.name].push({
        apiVersion: "v2",
        name: chart.name,
        version: chart.version,
        appVersion: chart.appVersion,
        description: chart.description,
        created: "2026-01-01T00:00:00Z",
        digest: chart.digest ?? createHash("sha256").update(archive(chart)).digest("hex"),
        // Relative, as `helm repo index` writes them.
        urls: [`charts/${chart.name}-${chart.version}.tgz`],
      });
    }
    return stringify({ apiVersion: "v1", entries, generated: options.generated ?? new Date().toISOString() });
  };
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (request, response) => {
    const path = new URL(request.url ?? "/", "https://repo.invalid").pathname;
    const authorized = !expected || request.headers.authorization === expected;
    requests.push({ path, authorized });
    if (!authorized) {
      response.writeHead(401, { "WWW-Authenticate": 'Basic realm="charts"' }).end();
      return;
    }
    if (path === "/index.yaml") {
      response.writeHead(200, { "Content-Type": "text/yaml" }).end(index());
      return;
    }
    const match = /^\/charts\/(.+)-(\d[^/]*)\.tgz$/.exec(path);
    const chart = match && charts.find((c) => c.name === match[1] && c.version === match[2]);
    if (chart) {
      response.writeHead(200, { "Content-Type": "application/gzip" }).end(archive(chart));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: tls.caPem,
    requests,
    add: (chart) => charts.push(chart),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
