// `virtualcluster platform store-info`: the store's size, what of it holds data, its free pages and housekeeping,
// for a person (or -o json). `--vacuum` rebuilds a stopped platform's store file.

import { type Command, InvalidArgumentError } from "commander";
import type { StoreInfoReport } from "../platform/store-info.ts";
import type { StoreInfo } from "../platform/store-monitor.ts";
import type { ReclaimRun } from "../storage/store-stats.ts";
import { formatBytes } from "../utils/byte-size.ts";
import { formatDuration } from "./duration.ts";
import { runAction } from "./run-action.ts";
import { addStoreOptions, type StoreFlags, storeSelection } from "./store-options.ts";

interface StoreInfoFlags extends StoreFlags {
  dataDir: string;
  output: "text" | "json";
  vacuum?: boolean;
}

function outputFormat(value: string): "text" | "json" {
  if (value !== "text" && value !== "json") throw new InvalidArgumentError('must be "text" or "json"');
  return value;
}

async function storeInfo(flags: StoreInfoFlags): Promise<void> {
  const { readStoreInfo, vacuumStopped } = await import("../platform/store-info.ts");
  const etcd = storeSelection(flags);
  if (flags.vacuum) {
    if (etcd) throw new Error("--vacuum is for the embedded store; etcd defragments (see --etcd-defrag-free-percent)");
    const done = vacuumStopped(flags.dataDir);
    process.stdout.write(
      `Vacuumed ${done.path} in ${((done.durationMs ?? 0) / 1000).toFixed(1)} s: ${formatBytes(done.bytesBefore)} -> ${formatBytes(done.bytesAfter ?? 0)}.\n`,
    );
    return;
  }
  const report = await readStoreInfo({ dataDir: flags.dataDir, etcd });
  process.stdout.write(flags.output === "json" ? `${JSON.stringify(report, null, 2)}\n` : describeStore(report));
}

const ago = (at: string | Date, now: number) => {
  const seconds = Math.max(0, Math.round((now - new Date(at).getTime()) / 1000));
  return `${new Date(at).toISOString()} (${formatDuration(seconds)} ago)`;
};

const share = (part: number, whole: number) => (whole > 0 ? `${Math.round((part / whole) * 100)}%` : "0%");

function reclaim(run: ReclaimRun, now: number): string {
  const step = run.longestStepMs === undefined ? "" : `, longest step ${run.longestStepMs.toFixed(1)} ms`;
  const member = run.member ? ` on ${run.member}` : "";
  return `${ago(run.at, now)}${member}, ${(run.durationMs / 1000).toFixed(2)} s, returned ${formatBytes(run.freedBytes)}${step}`;
}

/** The report as aligned "Label: value" lines. */
export function describeStore(report: StoreInfoReport, now = Date.now()): string {
  const { info } = report;
  const lines: [string, string][] = [];
  const stats = info.stats;
  const where =
    report.source === "etcd"
      ? `etcd, prefix ${report.prefix}`
      : `SQLite, ${report.path} (${report.source === "running" ? "running platform" : "platform stopped"})`;
  lines.push(["Store", where]);
  if (stats) {
    const wal = stats.walBytes ? `, of which WAL ${formatBytes(stats.walBytes)}` : "";
    lines.push(["Size on disk", `${formatBytes(stats.sizeBytes)}${wal}`]);
    lines.push(["In use", `${formatBytes(stats.inUseBytes)} (live objects and history not yet compacted)`]);
    lines.push([
      "Free pages",
      `${formatBytes(stats.freeBytes)} (${share(stats.freeBytes, stats.sizeBytes)} of the file)`,
    ]);
    if (stats.autoVacuum)
      lines.push([
        "Auto-vacuum",
        stats.autoVacuum === "incremental" ? "incremental" : "none (run --vacuum with the platform stopped)",
      ]);
    lines.push(["Revision", `${stats.revision} (readable from ${stats.compactedRevision})`]);
    for (const member of stats.members ?? []) {
      const state = member.error
        ? `does not answer: ${member.error}`
        : `${formatBytes(member.sizeBytes)}, in use ${formatBytes(member.inUseBytes)}${member.leader ? " (leader)" : ""}`;
      lines.push([`Member ${member.id ?? "?"}`, `${member.endpoint}: ${state}`]);
    }
  }
  if (info.error) lines.push(["Size unknown", info.error]);
  const settings = info.settings;
  if (settings) {
    lines.push([
      "Compaction",
      settings.compactionIntervalMs > 0
        ? `every ${formatDuration(settings.compactionIntervalMs / 1000)}, keeping ${formatDuration(settings.compactionRetentionMs / 1000)} of history`
        : "off (--store-compaction-interval 0)",
    ]);
  }
  if (info.lastCompaction) {
    const last = info.lastCompaction;
    lines.push([
      "Last compaction",
      `${ago(last.at, now)}, ${last.durationMs.toFixed(0)} ms, to revision ${last.revision}`,
    ]);
  }
  if (stats?.lastReclaim)
    lines.push([stats.backend === "etcd" ? "Last defrag" : "Last vacuum", reclaim(stats.lastReclaim, now)]);
  if (settings?.defrag) {
    const defrag = settings.defrag;
    lines.push([
      "Defragmentation",
      defrag === "off"
        ? "off (--no-etcd-defrag)"
        : `a member at ${Math.round(defrag.freeShare * 100)}% and ${formatBytes(defrag.minFreeBytes)} free`,
    ]);
  }
  if (report.source !== "etcd") lines.push(["Quota", quota(info)]);
  if (info.disk) {
    const below = info.disk.warningBytes > 0 ? ` (warning below ${formatBytes(info.disk.warningBytes)})` : "";
    lines.push(["Free disk", `${formatBytes(info.disk.freeBytes)} of ${formatBytes(info.disk.sizeBytes)}${below}`]);
  }
  for (const warning of info.warnings) lines.push(["Warning", warning]);
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return lines.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}\n`).join("");
}

function quota(info: StoreInfo): string {
  if (info.quota.bytes <= 0) return "none";
  const used = info.stats ? ` (${share(info.stats.inUseBytes, info.quota.bytes)} used)` : "";
  const reached = info.quota.reached ? ", reached: creates and updates are refused" : "";
  return `${formatBytes(info.quota.bytes)}${used}${reached}`;
}

export function addStoreInfoCommand(platform: Command): void {
  const command = platform
    .command("store-info")
    .description("Show the store's size, what of it holds data, its free pages and its housekeeping")
    .option("--data-dir <dir>", "data directory of the platform", "./data")
    .option("-o, --output <format>", 'output format: "text" or "json"', outputFormat, "text")
    .option("--vacuum", "rebuild a stopped platform's store file now (SQLite; returns every free page)");
  addStoreOptions(command)
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform store-info --data-dir /var/lib/vcp\n" +
        "  virtualcluster platform store-info --store etcd --etcd-endpoints https://10.0.0.1:2379 -o json\n" +
        "  virtualcluster platform store-info --data-dir /var/lib/vcp --vacuum   # with the platform stopped",
    )
    .action(runAction(storeInfo));
}
