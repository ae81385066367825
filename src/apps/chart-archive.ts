// The chart archive a HelmRelease installs, fetched by the platform itself so that a repository's credentials never
// leave it (a connected cluster's agent may be run by a non-admin Cluster owner): the repository's index.yaml is
// read, a version chosen the way Helm chooses one, and its archive fetched (credentials only to the repository's own
// host, as fetchBytes does), bounded, and checked against the index's sha256 digest when the index gives one.

import { createHash } from "node:crypto";
import semver from "semver";
import type { ChartRepositorySettings } from "../config/system-settings.ts";
import { type ChartVersion, parseHelmIndex } from "./helm-index.ts";
import { displayUrl, FetchError, fetchBytes } from "./http-fetch.ts";

export const MAX_INDEX_BYTES = 64 * 1024 * 1024;
export const MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;

export interface ChartArchive {
  version: string;
  archive: Buffer;
}

/** Why a chart could not be had; its message names no credential. */
export class ChartUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChartUnavailable";
  }
}

/**
 * The version Helm would install: the one whose text is `wanted` exactly; else the newest satisfying `wanted` as a
 * semver constraint (Masterminds' form: a comma means "and"); empty `wanted`: the newest that is not a pre-release.
 */
export function chooseChartVersion(versions: readonly ChartVersion[], wanted = ""): ChartVersion | undefined {
  const exact = versions.find((entry) => entry.version === wanted);
  if (exact) return exact;
  const range = semver.validRange(wanted.trim() === "" ? "*" : wanted.replaceAll(",", " "));
  if (range === null) return undefined;
  let best: ChartVersion | undefined;
  for (const entry of versions) {
    const parsed = semver.valid(entry.version);
    if (parsed === null || !semver.satisfies(parsed, range)) continue;
    if (!best || semver.gt(parsed, semver.valid(best.version) ?? "0.0.0")) best = entry;
  }
  return best;
}

/** The archive of `chart` at the version chosen from `wanted`; rejects with ChartUnavailable saying why. */
export async function fetchChartArchive(
  repository: ChartRepositorySettings,
  chart: string,
  wanted?: string,
): Promise<ChartArchive> {
  const credentials = {
    username: repository.username || undefined,
    password: repository.password || undefined,
    insecure: repository.insecure,
    credentialsHost: new URL(repository.url).host,
  };
  const index = await fetching(() =>
    fetchBytes(`${repository.url.replace(/\/+$/, "")}/index.yaml`, { ...credentials, maxBytes: MAX_INDEX_BYTES }),
  );
  const charts = parseIndex(index, repository);
  const versions = charts.find((entry) => entry.name === chart)?.versions;
  if (!versions) throw new ChartUnavailable(`repository "${repository.name}" has no chart "${chart}"`);
  const entry = chooseChartVersion(versions, wanted);
  if (!entry) {
    throw new ChartUnavailable(
      `chart "${chart}" of repository "${repository.name}" has no version matching "${wanted}"`,
    );
  }
  const address = entry.urls[0];
  if (!address) throw new ChartUnavailable(`chart "${chart}" ${entry.version} has no archive address in the index`);
  const archive = await fetching(() => fetchBytes(address, { ...credentials, maxBytes: MAX_ARCHIVE_BYTES }));
  const digest = createHash("sha256").update(archive).digest("hex");
  if (entry.digest && entry.digest.toLowerCase() !== digest) {
    throw new ChartUnavailable(
      `${displayUrl(address)}: the archive's sha256 ${digest} is not the index's digest ${entry.digest}`,
    );
  }
  return { version: entry.version, archive };
}

function parseIndex(index: Buffer, repository: ChartRepositorySettings) {
  try {
    return parseHelmIndex(index.toString("utf8"), repository.url);
  } catch (error) {
    throw new ChartUnavailable(`repository "${repository.name}": ${(error as Error).message}`);
  }
}

async function fetching(read: () => Promise<Buffer>): Promise<Buffer> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof FetchError) throw new ChartUnavailable(error.message);
    throw error;
  }
}
