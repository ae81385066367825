// Watch streams: newline-delimited JSON written raw to the Node response. Headers are flushed at once
// so clients see the stream open before any event exists; the socket's buffer drives backpressure into the store.

import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { StatusError } from "../apimachinery/errors.ts";
import type { Status } from "../apimachinery/types.ts";
import type {
  ApiWatchEvent,
  RequestContext,
  ResourceStore,
  WatchHandle,
  WatchOptions,
  WatchSink,
} from "../registry/types.ts";
import { toStatusError } from "./error-status.ts";
import type { WatchGuard } from "./watch-caller-check.ts";

/** Turns one event into one line (without the trailing newline). */
export type WatchEventEncoder = (event: ApiWatchEvent) => string;

/** An open watch the server can end on shutdown. */
export interface ActiveWatch {
  stop(): void;
}

export interface WatchStreamOptions {
  response: ServerResponse;
  store: ResourceStore;
  context: RequestContext;
  options: WatchOptions;
  encode: WatchEventEncoder;
  /** Extra response headers (warnings), read when the headers are written. */
  headers?: () => OutgoingHttpHeaders;
  /** Open watches, for shutdown. The stream adds and removes itself. */
  active: Set<ActiveWatch>;
  /** Called once when the stream is over: the response code (200, or the error's when it failed before starting). */
  onEnd(code: number, error?: Status): void;
  /** Called when the store's watch() threw something that is not a StatusError. */
  onInternalError?(error: unknown): void;
  /** May end the stream early (its caller changed: watch-caller-check.ts); started once the stream runs. */
  guard?: WatchGuard;
}

/** Objects are immutable once sent, so one serialization serves every watcher of the same event object. */
const encodedObjects = new WeakMap<object, string>();
/** The HTTP chunk of a JSON event, shared by every watcher the registry hands the same event object. */
const encodedChunks = new WeakMap<ApiWatchEvent, Buffer>();

/** The default JSON framing: `{"type":"ADDED","object":{...}}`. */
export function encodeWatchEventJson(event: ApiWatchEvent): string {
  let json = encodedObjects.get(event.object);
  if (json === undefined) {
    json = JSON.stringify(event.object);
    encodedObjects.set(event.object, json);
  }
  return `{"type":"${event.type}","object":${json}}`;
}

/** One line as a complete chunk of a chunked HTTP body: `<size hex>\r\n<line>\n\r\n`. */
export function chunkOf(line: string): Buffer {
  const size = Buffer.byteLength(line) + 1;
  return Buffer.from(`${size.toString(16)}\r\n${line}\n\r\n`);
}

/** encodeWatchEventJson as a ready chunk, built once per event object. */
function jsonEventChunk(event: ApiWatchEvent): Buffer {
  let chunk = encodedChunks.get(event);
  if (chunk === undefined) {
    chunk = chunkOf(encodeWatchEventJson(event));
    encodedChunks.set(event, chunk);
  }
  return chunk;
}

/** The last chunk of a chunked body (no trailers). */
const LAST_CHUNK = Buffer.from("0\r\n\r\n");

/** Upstream's default watch timeout: a random duration between 30 and 60 minutes, so reconnects spread out. */
export function defaultWatchTimeoutSeconds(): number {
  return 1800 + Math.floor(Math.random() * 1800);
}

/**
 * Serves one watch. Resolves when the stream has started (or failed before starting, in which case the Status
 * has been written). The stream then runs until the store ends it, the timeout, the client leaves, or `stop()`.
 */
export async function serveWatch(o: WatchStreamOptions): Promise<void> {
  const { response } = o;
  let handle: WatchHandle | undefined;
  let headersSent = false;
  let finished = false;
  let waitingForDrain = false;
  let resumeWhenReady = false;
  let timer: NodeJS.Timeout | undefined;
  // Whether this stream writes its own chunk framing (one write of a shared, ready-made chunk per event instead of
  // Node framing every write as four pieces); false when Node does not frame the body as chunked at all.
  let framing = false;
  const chunkFor =
    o.encode === encodeWatchEventJson ? jsonEventChunk : (event: ApiWatchEvent) => chunkOf(o.encode(event));

  const writeHeaders = () => {
    if (headersSent) return;
    headersSent = true;
    response.writeHead(200, {
      ...o.headers?.(),
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked",
    });
    response.flushHeaders();
    const message = response as ServerResponse & { chunkedEncoding?: boolean };
    if (message.chunkedEncoding === true) {
      message.chunkedEncoding = false;
      framing = true;
    }
  };

  /** Writes one event (or an in-band error line); false when the socket buffer is full. */
  const writeEvent = (event: ApiWatchEvent): boolean =>
    framing ? response.write(chunkFor(event)) : response.write(`${o.encode(event)}\n`);

  const endBody = () => {
    if (framing) response.end(LAST_CHUNK);
    else response.end();
  };

  const onDrain = () => {
    waitingForDrain = false;
    if (handle) handle.resume();
    else resumeWhenReady = true;
  };

  const finish = (closeStore: boolean) => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    o.guard?.end();
    o.active.delete(active);
    response.off("close", onClientGone);
    response.off("drain", onDrain);
    if (closeStore && handle) handle.close();
    if (!response.destroyed) {
      writeHeaders();
      if (!response.writableEnded) endBody();
    }
    o.onEnd(200);
  };

  const onClientGone = () => finish(true);
  const active: ActiveWatch = { stop: () => finish(true) };

  const sink: WatchSink = {
    send(event) {
      if (finished) return true;
      writeHeaders();
      const ok = writeEvent(event);
      if (!ok && !waitingForDrain) {
        waitingForDrain = true;
        response.once("drain", onDrain);
      }
      return ok;
    },
    end() {
      finish(false);
    },
  };

  o.active.add(active);
  response.on("close", onClientGone);
  const timeoutSeconds = o.options.timeoutSeconds ?? defaultWatchTimeoutSeconds();
  timer = setTimeout(() => finish(true), timeoutSeconds * 1000);
  timer.unref();

  try {
    handle = await o.store.watch(o.context, o.options, sink);
  } catch (error) {
    const { error: status, internal } = toStatusError(error);
    if (internal) o.onInternalError?.(error);
    failBeforeStart(status);
    return;
  }
  if (finished) {
    // The client left (or the server stopped) while the store was setting up.
    handle.close();
    return;
  }
  writeHeaders();
  if (resumeWhenReady) handle.resume();
  o.guard?.start(() => finish(true));

  function failBeforeStart(error: StatusError) {
    if (finished) return;
    if (headersSent) {
      // Events already flowed: report in-band, as upstream does for errors after the stream began.
      const line = JSON.stringify({ type: "ERROR", object: error.status });
      response.write(framing ? chunkOf(line) : `${line}\n`);
      finish(false);
      return;
    }
    finished = true;
    if (timer) clearTimeout(timer);
    o.guard?.end();
    o.active.delete(active);
    response.off("close", onClientGone);
    response.writeHead(error.code, { ...error.headers, "Content-Type": "application/json" });
    response.end(JSON.stringify(error.status));
    o.onEnd(error.code, error.status);
  }
}
