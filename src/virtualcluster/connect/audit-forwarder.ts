// Sends a virtual cluster's audit events to its platform's datastore over the platform connection. Event lines wait
// in a bounded buffer while the platform is unreachable (or the cluster not yet connected) and go in batches once
// it answers, oldest first, so a temporary loss of the connection loses nothing within the bound; past it the
// newest are dropped and counted. A platform whose audit config sets disableAgentSyncBack answers 403 naming it:
// the buffer is emptied and sending pauses (new events are discarded) until a later probe is accepted.

import type { Logger } from "pino";

const DEFAULT_MAX_BUFFERED = 10_000;
const BATCH_EVENTS = 500;
/** The platform takes request bodies up to 3 MiB: batches stay well below. */
const BATCH_BYTES = 1024 * 1024;
const DEFAULT_INTERVAL_MS = 1_000;
const MAX_RETRY_DELAY_MS = 30_000;
/** How long sending stays off after the platform said sync back is disabled, before one probe batch. */
const DISABLED_RECHECK_MS = 60_000;
const SYNC_BACK_DISABLED = "disableAgentSyncBack";

export interface AuditBatchTarget {
  /** The connected instance, or undefined while not connected. */
  instance(): { namespace: string; name: string } | undefined;
  /** Sends events (parsed lines) to the instance's auditevents intake; rejects with the platform's answer. */
  send(instance: { namespace: string; name: string }, events: unknown[]): Promise<void>;
}

export interface AuditForwarderOptions {
  target: AuditBatchTarget;
  maxBuffered?: number;
  intervalMs?: number;
  logger?: Logger;
}

export interface ForwarderStats {
  sent: number;
  buffered: number;
  dropped: number;
  /** Events discarded because the platform does not take them (disableAgentSyncBack). */
  discarded: number;
  syncBackDisabled: boolean;
  lastError?: string;
}

export class AuditForwarder {
  private readonly options: AuditForwarderOptions;
  private readonly maxBuffered: number;
  private buffer: string[] = [];
  private readonly timer: NodeJS.Timeout;
  private sending: Promise<void> | undefined;
  private retryAt = 0;
  private retryDelay = 0;
  private disabledUntil = 0;
  private readonly counts: ForwarderStats = { sent: 0, buffered: 0, dropped: 0, discarded: 0, syncBackDisabled: false };
  private lastLogged: string | undefined;

  constructor(options: AuditForwarderOptions) {
    this.options = options;
    this.maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    this.timer = setInterval(() => this.flush(), options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.timer.unref();
  }

  /** Takes a batch of event lines from the audit log (its tap). */
  add(lines: readonly string[]): void {
    if (this.counts.syncBackDisabled && Date.now() < this.disabledUntil) {
      this.counts.discarded += lines.length;
      return;
    }
    const room = Math.max(0, this.maxBuffered - this.buffer.length);
    if (lines.length > room) this.counts.dropped += lines.length - room;
    for (let i = 0; i < Math.min(room, lines.length); i++) this.buffer.push(lines[i]);
  }

  stats(): ForwarderStats {
    return { ...this.counts, buffered: this.buffer.length };
  }

  /** Sends what is buffered when the platform can take it; resolves when this attempt is over. */
  flush(): Promise<void> {
    this.sending ??= this.sendAll().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  /** One last attempt to send what is buffered. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.retryAt = 0;
    await this.flush();
  }

  private async sendAll(): Promise<void> {
    while (this.buffer.length > 0 && Date.now() >= this.retryAt) {
      const instance = this.options.target.instance();
      if (!instance) return;
      let count = 0;
      let bytes = 0;
      while (
        count < this.buffer.length &&
        count < BATCH_EVENTS &&
        (count === 0 || bytes + this.buffer[count].length <= BATCH_BYTES)
      ) {
        bytes += this.buffer[count].length;
        count++;
      }
      const batch = this.buffer.slice(0, count);
      const events: unknown[] = [];
      for (const line of batch) {
        try {
          events.push(JSON.parse(line));
        } catch {
          this.counts.dropped++; // cannot happen for lines the audit log built; never blocks the rest
        }
      }
      try {
        await this.options.target.send(instance, events);
      } catch (error) {
        // One event larger than the platform takes (413) would block every later one: it is dropped, counted.
        if ((error as { code?: number }).code === 413 && batch.length === 1) {
          this.buffer.shift();
          this.counts.dropped++;
          continue;
        }
        this.failed(error);
        return;
      }
      this.buffer.splice(0, batch.length);
      this.counts.sent += events.length;
      this.retryDelay = 0;
      if (this.counts.syncBackDisabled || this.counts.lastError) {
        this.options.logger?.info("the platform takes this virtual cluster's audit events again");
      }
      this.counts.syncBackDisabled = false;
      this.counts.lastError = undefined;
      this.lastLogged = undefined;
    }
  }

  private failed(error: unknown): void {
    const message = errorText(error);
    if ((error as { code?: number }).code === 403 && message.includes(SYNC_BACK_DISABLED)) {
      this.counts.discarded += this.buffer.length;
      this.buffer = [];
      this.counts.syncBackDisabled = true;
      this.disabledUntil = Date.now() + DISABLED_RECHECK_MS;
      this.retryAt = 0;
    } else {
      this.counts.lastError = message;
      this.retryDelay = Math.min(this.retryDelay ? this.retryDelay * 2 : 1_000, MAX_RETRY_DELAY_MS);
      this.retryAt = Date.now() + this.retryDelay;
    }
    if (this.lastLogged === message) return;
    this.lastLogged = message;
    this.options.logger?.warn(
      { err: message, buffered: this.buffer.length },
      this.counts.syncBackDisabled
        ? "the platform does not take audit events from virtual clusters (disableAgentSyncBack); not sending them"
        : "sending audit events to the platform failed; keeping them and retrying",
    );
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
