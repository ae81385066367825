// The platform's health as the overview shows it to admins, read from what the platform already serves: /readyz
// (verbose: each check, with its warnings), /metrics (store size and quota, audit failures), /platform/replicas
// (the running replicas), the Config's status (audit) and /auth/info (the login connectors).

export interface ReadyCheck {
  name: string;
  ok: boolean;
  warning?: string;
}

/** The lines of `/readyz?verbose`: "[+]store-space ok", "[+]x ok (warning: ...)", "[-]etcd failed: ...". */
export function parseReadyz(text: string): ReadyCheck[] {
  const checks: ReadyCheck[] = [];
  for (const line of text.split("\n")) {
    const match = /^\[([+-])\](\S+) (.*)$/.exec(line.trim());
    if (!match) continue;
    const warning = /\(warning: (.*)\)$/.exec(match[3])?.[1];
    checks.push({ name: match[2], ok: match[1] === "+", ...(warning ? { warning } : {}) });
  }
  return checks;
}

/** The sums of the named metrics over their label sets, from Prometheus' text format. */
export function parseMetrics(text: string, names: readonly string[]): Record<string, number> {
  const wanted = new Set(names);
  const sums: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (!match || !wanted.has(match[1])) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value)) sums[match[1]] = (sums[match[1]] ?? 0) + value;
  }
  return sums;
}

export const HEALTH_METRICS = [
  "apiserver_storage_size_bytes",
  "apiserver_storage_size_in_use_bytes",
  "apiserver_storage_quota_bytes",
  "apiserver_storage_quota_reached",
  "apiserver_storage_data_dir_free_bytes",
  "apiserver_audit_event_total",
  "apiserver_audit_error_total",
  "platform_audit_sink_failures_total",
  "platform_audit_datastore_failures_total",
  "platform_audit_datastore_spooled_events",
] as const;

export interface Replica {
  identity: string;
  version: string;
  store: string;
  leading: boolean;
  startedAt: string;
  renewedAt: string;
}

export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return "unknown";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
