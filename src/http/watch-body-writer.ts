// How a watch stream's body reaches the client. A watch with many watchers writes one event to each of them per
// update, so what one write costs is multiplied by the watchers: through ServerResponse every write also corks the
// socket, schedules a tick and uncorks it. Once the headers are out and the response owns its socket, the stream's
// own chunks (complete chunked-body framing) can go to the socket directly: the chunks a watcher gets in one turn
// of the event loop are joined and written once, one TLS record and one syscall for a burst, in order.

import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface WatchBodyWriter {
  /** Queues one piece of the body; false when the client's buffer is full (wait for onDrain before more). */
  write(chunk: Buffer | string): boolean;
  /** Writes what is queued now: before the response's own writes (the last chunk, an error line). */
  flush(): void;
  /** `listener` runs once, when the buffer has room again after write returned false. */
  onceDrain(listener: () => void): void;
  offDrain(listener: () => void): void;
}

/** Every write through the response (Node frames them, or the body is not chunked at all). */
export function responseBodyWriter(response: ServerResponse): WatchBodyWriter {
  return {
    write: (chunk) => response.write(chunk),
    flush() {},
    onceDrain: (listener) => response.once("drain", listener),
    offDrain: (listener) => response.off("drain", listener),
  };
}

/**
 * Writes straight to the response's socket, joining the chunks queued in one turn into one write. Only for a
 * response whose headers are written to the socket and which has nothing else queued (directBodyWriterFor checks).
 */
class SocketBodyWriter implements WatchBodyWriter {
  readonly #socket: Socket;
  #queued: Buffer[] = [];
  #queuedBytes = 0;
  #scheduled = false;
  readonly #flushSoon = () => {
    this.#scheduled = false;
    this.flush();
  };

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  write(chunk: Buffer | string): boolean {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.#queued.push(buffer);
    this.#queuedBytes += buffer.length;
    // A burst bigger than the socket's buffer goes out now: the store then pauses on false, as with the response.
    if (this.#queuedBytes + this.#socket.writableLength >= this.#socket.writableHighWaterMark) {
      this.flush();
      return !this.#socket.writableNeedDrain;
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      // After the current task's synchronous work: every event the store hands over in this turn shares the write.
      queueMicrotask(this.#flushSoon);
    }
    return !this.#socket.writableNeedDrain;
  }

  flush(): void {
    if (this.#queued.length === 0) return;
    const queued = this.#queued;
    const bytes = this.#queuedBytes;
    this.#queued = [];
    this.#queuedBytes = 0;
    // A client that left: the stream ends on the response's close, and nothing more can reach it.
    if (this.#socket.destroyed) return;
    this.#socket.write(queued.length === 1 ? queued[0] : Buffer.concat(queued, bytes));
  }

  onceDrain(listener: () => void): void {
    this.#socket.once("drain", listener);
  }

  offDrain(listener: () => void): void {
    this.#socket.off("drain", listener);
  }
}

/**
 * The direct writer for a response whose headers were flushed to its socket and which has nothing else queued,
 * else undefined (a pipelined response still waiting for its turn, a response without a socket).
 */
export function directBodyWriterFor(response: ServerResponse): WatchBodyWriter | undefined {
  const socket = response.socket as Socket | null;
  if (!socket || socket.destroyed || !response.headersSent) return undefined;
  if (response.writableLength !== socket.writableLength) return undefined;
  return new SocketBodyWriter(socket);
}
