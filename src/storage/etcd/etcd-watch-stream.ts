// One etcd watch that survives the death of the member it streams from: it remembers the revision of the last
// event it passed on and, when the stream breaks, opens a new one on the next endpoint from the revision after it.
// etcd delivers every revision's events whole and in order, so the consumer sees each event exactly once.
// A start revision below etcd's compaction ends the watch with the compacted revision.

import { type EtcdClient, type EtcdKeyValue, type EtcdStream, toBase64 } from "./etcd-client.ts";

export interface EtcdWatchEvent {
  type?: "PUT" | "DELETE";
  kv: EtcdKeyValue;
  prev_kv?: EtcdKeyValue;
}

export interface EtcdWatchStreamOptions {
  client: EtcdClient;
  /** The watched range: keys >= key and < rangeEnd (bytes). */
  key: Uint8Array;
  rangeEnd: Uint8Array;
  /** The first etcd revision wanted. */
  startRevision: number;
  /** Events in revision order, as etcd batched them. */
  onEvents(events: EtcdWatchEvent[]): void;
  /** etcd compacted past the revision the watch needs (it has ended). */
  onCompacted(compactRevision: number): void;
  /** The stream broke and is being opened again (for logs and readiness). */
  onInterrupted?(error: Error): void;
  /** Delay before reopening on the next endpoint (default 100 ms). */
  retryDelayMs?: number;
}

interface WatchResult {
  created?: boolean;
  canceled?: boolean;
  compact_revision?: string;
  cancel_reason?: string;
  events?: EtcdWatchEvent[];
}

export class EtcdWatchStream {
  private readonly options: EtcdWatchStreamOptions;
  private next: number;
  private stream?: EtcdStream;
  private endpoint = 0;
  private paused = false;
  private stopped = false;
  private retry?: NodeJS.Timeout;

  constructor(options: EtcdWatchStreamOptions) {
    this.options = options;
    this.next = options.startRevision;
    this.endpoint = 0;
    this.open();
  }

  /** The revision the stream asks for when it (re)opens: one past the last event passed on. */
  get nextRevision(): number {
    return this.next;
  }

  pause(): void {
    this.paused = true;
    this.stream?.pause();
  }

  resume(): void {
    this.paused = false;
    this.stream?.resume();
  }

  close(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.stream?.close();
    this.stream = undefined;
  }

  private open(): void {
    if (this.stopped) return;
    const { client } = this.options;
    const request = {
      create_request: {
        key: toBase64(this.options.key),
        range_end: toBase64(this.options.rangeEnd),
        start_revision: String(this.next),
        prev_kv: true,
      },
    };
    const stream = client.stream(
      "/v3/watch",
      request,
      {
        onMessage: (message) => this.received(stream, message as WatchResult),
        onEnd: (error) => {
          if (this.stream !== stream || this.stopped) return;
          this.stream = undefined;
          this.options.onInterrupted?.(error ?? new Error("etcd watch ended"));
          this.endpoint++;
          this.retry = setTimeout(() => this.open(), this.options.retryDelayMs ?? 100);
        },
      },
      this.endpoint,
    );
    this.stream = stream;
    if (this.paused) stream.pause();
  }

  private received(stream: EtcdStream, result: WatchResult): void {
    if (this.stream !== stream || this.stopped) return;
    if (result.canceled) {
      const compacted = Number(result.compact_revision ?? 0);
      if (compacted > 0) {
        this.close();
        this.options.onCompacted(compacted);
        return;
      }
      // Cancelled for another reason (its member lost the leader): reopen elsewhere from where it stood.
      stream.close();
      this.stream = undefined;
      this.options.onInterrupted?.(new Error(`etcd cancelled the watch: ${result.cancel_reason ?? "no reason"}`));
      this.endpoint++;
      this.retry = setTimeout(() => this.open(), this.options.retryDelayMs ?? 100);
      return;
    }
    const events = result.events;
    if (!events || events.length === 0) return;
    this.next = Number(events[events.length - 1].kv.mod_revision) + 1;
    this.options.onEvents(events);
  }
}
