// A lean watch client for the fan-out benchmark: one raw TLS connection per watcher, the GET written by hand, and the
// chunked body decoded here. 1,000 streams share the single load CPU, and node:https's per-chunk machinery
// (response stream, string decoder, parser callbacks) made the measuring client slower than the server it
// measured; this client does only what any watcher must: TLS, chunk framing and line splitting.
//
// Event lines are ASCII JSON from our own server, so the bytes are read as latin1 (one char per byte), which
// keeps chunk sizes equal to string lengths and costs no UTF-8 decoding.

import { isIP } from "node:net";
import { connect, type TLSSocket } from "node:tls";

export interface WatchStreamOptions {
  url: URL;
  /** Path and query of the watch request. */
  path: string;
  token: string;
  ca: string;
  /** One complete event line (without the newline), with the time its bytes arrived. */
  onLine(line: string, receivedAt: number): void;
  /** The stream ended (last chunk, socket closed, or error). Called once. */
  onEnd(reason: string): void;
}

type Phase = "headers" | "size" | "data" | "done";

/** Opens the stream; resolves once the response headers arrived with status 200, rejects otherwise. */
export function openWatchStream(o: WatchStreamOptions): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = o.url.hostname.replace(/^\[|\]$/g, "");
    // SNI takes host names only; an IP address is verified against the certificate's IP SANs without it.
    const socket = connect({ host, port: Number(o.url.port), ca: o.ca, servername: isIP(host) ? undefined : host });
    let phase: Phase = "headers";
    let buffer = "";
    let remaining = 0;
    let line = "";
    let settled = false;
    const end = (reason: string) => {
      if (phase === "done") return;
      phase = "done";
      if (!settled) {
        settled = true;
        reject(new Error(`watch stream ended before its headers: ${reason}`));
      }
      o.onEnd(reason);
    };
    socket.setNoDelay(true);
    socket.on("secureConnect", () => {
      socket.write(
        `GET ${o.path} HTTP/1.1\r\nHost: ${o.url.host}\r\nAuthorization: Bearer ${o.token}\r\n` +
          "Accept: application/json\r\nUser-Agent: vcp-bench-watch\r\n\r\n",
      );
    });
    socket.on("data", (bytes: Buffer) => {
      const now = performance.now();
      buffer += bytes.toString("latin1");
      for (;;) {
        if (phase === "headers") {
          const at = buffer.indexOf("\r\n\r\n");
          if (at < 0) return;
          const head = buffer.slice(0, at);
          buffer = buffer.slice(at + 4);
          if (!head.startsWith("HTTP/1.1 200 ") || !/\r\ntransfer-encoding: *chunked/i.test(head)) {
            settled = true;
            reject(new Error(`watch answered: ${head.split("\r\n", 1)[0]}`));
            phase = "done";
            socket.destroy();
            return;
          }
          phase = "size";
          settled = true;
          resolve(socket);
        } else if (phase === "size") {
          const at = buffer.indexOf("\r\n");
          if (at < 0) return;
          remaining = Number.parseInt(buffer.slice(0, at), 16);
          buffer = buffer.slice(at + 2);
          if (remaining === 0) return end("last chunk");
          phase = "data";
        } else if (phase === "data") {
          if (buffer.length < remaining + 2) return;
          let data = buffer.slice(0, remaining);
          buffer = buffer.slice(remaining + 2);
          phase = "size";
          // A chunk normally holds exactly one line; a line split over chunks is joined here.
          if (line !== "") {
            data = line + data;
            line = "";
          }
          let start = 0;
          for (let nl = data.indexOf("\n"); nl >= 0; nl = data.indexOf("\n", start)) {
            o.onLine(data.slice(start, nl), now);
            start = nl + 1;
          }
          if (start < data.length) line = data.slice(start);
        } else {
          return;
        }
      }
    });
    socket.on("error", (error) => end(`error: ${error.message}`));
    socket.on("close", () => end("closed"));
  });
}
