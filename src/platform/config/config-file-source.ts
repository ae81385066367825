// `platform start --config FILE`: the file's content becomes the Config's spec.raw at start and whenever the file
// changes. The directory is watched (editors and ConfigMap mounts replace files rather than write them in place),
// events are debounced, and unchanged content is skipped. Content that fails validation is logged by field path
// (never with values) and the config in force stays. A file written in place is empty between its truncation and the
// write, and an empty config is valid (every default): an empty file seen by the watch is applied only once it has
// stayed empty for EMPTY_SETTLE_MS.

import { type FSWatcher, unwatchFile, watch, watchFile } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import { trustedConfigContext } from "../../config/trusted-context.ts";
import type { ResourceStore } from "../../registry/types.ts";

const AGENT = "platform-config-file";
export const DEFAULT_DEBOUNCE_MS = 50;
/** How long a watched file must stay empty before its emptiness (every default) is applied. */
export const EMPTY_SETTLE_MS = 2_000;
/** Safety net for file systems without change events (network mounts): a stat every few seconds. */
const POLL_INTERVAL_MS = 2_000;

export interface ConfigFileSourceOptions {
  path: string;
  store: ResourceStore;
  name: string;
  logger?: Logger;
  debounceMs?: number;
  /** Default EMPTY_SETTLE_MS. */
  emptySettleMs?: number;
}

export type FileApplyResult =
  | { ok: true; warnings: string[] }
  | { ok: false; problems: string[] }
  | { ok: "unchanged" }
  /** The watch saw the file empty: applied if it stays so (EMPTY_SETTLE_MS). */
  | { ok: "pending" };

export class ConfigFileSource {
  readonly path: string;
  private readonly options: ConfigFileSourceOptions;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastContent: string | undefined;
  /** When the watch first read the file empty (since then it has read nothing else). */
  private emptySince: number | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(options: ConfigFileSourceOptions) {
    this.options = options;
    this.path = resolve(options.path);
  }

  /** Reads the file (it must exist), writes it to the store, and starts watching. */
  static async start(options: ConfigFileSourceOptions): Promise<ConfigFileSource> {
    const source = new ConfigFileSource(options);
    await readFile(source.path, "utf8"); // fail `platform start` early on a wrong path
    await source.reload();
    source.watch();
    return source;
  }

  /** Reads the file now and applies it if it changed (serialized with other reloads). */
  reload(): Promise<FileApplyResult> {
    return this.enqueue(false);
  }

  private enqueue(watched: boolean): Promise<FileApplyResult> {
    const next = this.chain.then(() => this.applyFile(watched));
    this.chain = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.close();
    unwatchFile(this.path);
  }

  private watch(): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
        // Symlink swaps (ConfigMap mounts) report another name: any event in the directory triggers a check.
        if (file === null || file === name || file.startsWith("..")) this.schedule();
      });
      this.watcher.on("error", (error) => {
        this.options.logger?.warn({ err: String(error), path: this.path }, "config file watch failed; polling only");
      });
    } catch (error) {
      this.options.logger?.warn({ err: String(error), path: this.path }, "config file cannot be watched; polling only");
    }
    watchFile(this.path, { interval: POLL_INTERVAL_MS, persistent: false }, () => this.schedule());
  }

  private schedule(delayMs = this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.enqueue(true), delayMs);
    this.timer.unref();
  }

  /** Whether an empty read by the watch waits: until the file has stayed empty long enough (then checked again). */
  private emptyWaits(content: string, watched: boolean): boolean {
    if (content !== "" || !watched || this.lastContent === "") {
      this.emptySince = undefined;
      return false;
    }
    this.emptySince ??= Date.now();
    const left = this.emptySince + (this.options.emptySettleMs ?? EMPTY_SETTLE_MS) - Date.now();
    if (left <= 0) return false;
    this.options.logger?.info({ path: this.path }, "config file empty; applied if it stays empty");
    this.schedule(left);
    return true;
  }

  private async applyFile(watched: boolean): Promise<FileApplyResult> {
    const { logger, store, name } = this.options;
    let content: string;
    try {
      content = await readFile(this.path, "utf8");
    } catch (error) {
      logger?.error(
        { path: this.path, err: (error as Error).message },
        "config file unreadable; the config in force stays",
      );
      return { ok: false, problems: [(error as Error).message] };
    }
    if (this.emptyWaits(content, watched)) return { ok: "pending" };
    if (content === this.lastContent) return { ok: "unchanged" };
    const context = trustedConfigContext(AGENT);
    try {
      await store.patch(context, { name }, "merge", { spec: { raw: content } }, { fieldManager: AGENT });
      this.lastContent = content;
      logger?.info({ path: this.path, warnings: context.warnings }, "config file applied");
      return { ok: true, warnings: context.warnings };
    } catch (error) {
      if (!isStatusError(error)) throw error;
      // Causes carry field paths and messages; secret values never appear in them.
      const causes = error.status.details?.causes ?? [];
      const problems = causes.length ? causes.map((c) => `${c.field}: ${c.message}`) : [error.message];
      logger?.error({ path: this.path, problems }, "config file rejected; the config in force stays");
      return { ok: false, problems };
    }
  }
}
