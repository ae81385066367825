import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import type { RequestContext, ResourceStore, WatchSink } from "../registry/types.ts";
import { type ActiveWatch, encodeWatchEventJson, serveWatch } from "./watch.ts";

/** A ServerResponse stand-in recording what the stream writes; `accept` decides write()'s return value. */
class FakeResponse extends EventEmitter {
  status = 0;
  headers: Record<string, unknown> = {};
  flushed = false;
  chunks: string[] = [];
  ended = false;
  destroyed = false;
  accept = true;
  get writableEnded() {
    return this.ended;
  }
  writeHead(status: number, headers: Record<string, unknown>) {
    this.status = status;
    this.headers = headers;
    return this;
  }
  flushHeaders() {
    this.flushed = true;
  }
  write(chunk: string) {
    this.chunks.push(chunk);
    return this.accept;
  }
  end(chunk?: string) {
    if (chunk) this.chunks.push(chunk);
    this.ended = true;
  }
}

/** A ResourceStore double exposing the sink and counting resume/close calls. */
function fakeStore(onWatch: (sink: WatchSink) => void = () => {}) {
  const calls = { resume: 0, close: 0, sink: undefined as WatchSink | undefined };
  const store = {
    definition: {},
    watch: async (_context: unknown, _options: unknown, sink: WatchSink) => {
      calls.sink = sink;
      onWatch(sink);
      return { resume: () => calls.resume++, close: () => calls.close++ };
    },
  } as unknown as ResourceStore;
  return { store, calls };
}

const context = {} as RequestContext;
const user = (name: string): KubeObject => ({ apiVersion: "g/v1", kind: "User", metadata: { name } });

function start(response: FakeResponse, store: ResourceStore, timeoutSeconds = 60) {
  const active = new Set<ActiveWatch>();
  const ends: number[] = [];
  let markEnded: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    markEnded = resolve;
  });
  const started = serveWatch({
    response: response as unknown as ServerResponse,
    store,
    context,
    options: { timeoutSeconds },
    encode: encodeWatchEventJson,
    active,
    onEnd: (code) => {
      ends.push(code);
      markEnded();
    },
  });
  return { active, ends, started, ended };
}

/** A real node:http server serving every request as a watch of a store double; `sink()` waits for its sink. */
async function realWatchServer(onResponse: (response: ServerResponse) => void = () => {}) {
  let sink: WatchSink | undefined;
  const calls = { resume: 0 };
  const store = {
    watch: async (_c: unknown, _o: unknown, given: WatchSink) => {
      sink = given;
      return { resume: () => calls.resume++, close: () => {} };
    },
  } as unknown as ResourceStore;
  const active = new Set<ActiveWatch>();
  const server = createServer((_request, response) => {
    onResponse(response);
    void serveWatch({ response, store, context, options: {}, encode: encodeWatchEventJson, active, onEnd: () => {} });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    calls,
    connect: () => connect((server.address() as AddressInfo).port, "127.0.0.1"),
    async sink(): Promise<WatchSink> {
      while (!sink) await new Promise((resolve) => setTimeout(resolve, 5));
      return sink;
    },
    close: () => server.close(),
  };
}

describe("serveWatch()", () => {
  it("serveWatch() flushes headers before any event and frames one JSON object per line", async () => {
    const response = new FakeResponse();
    const { store, calls } = fakeStore();
    await start(response, store).started;
    assert.equal(response.status, 200);
    assert.equal(response.flushed, true);
    assert.equal(response.headers["Content-Type"], "application/json");
    assert.equal(response.chunks.length, 0);
    calls.sink!.send({ type: "ADDED", object: user("a") });
    assert.deepEqual(
      response.chunks.map((c) => JSON.parse(c)),
      [{ type: "ADDED", object: user("a") }],
    );
    assert.ok(response.chunks[0].endsWith("}\n"));
  });

  it("serveWatch() reports backpressure and resumes the store on drain", async () => {
    const response = new FakeResponse();
    const { store, calls } = fakeStore();
    await start(response, store).started;
    response.accept = false;
    assert.equal(calls.sink!.send({ type: "ADDED", object: user("a") }), false);
    assert.equal(calls.resume, 0);
    response.emit("drain");
    assert.equal(calls.resume, 1);
  });

  it("serveWatch() closes the store's watch when the client goes away, once", async () => {
    const response = new FakeResponse();
    const { store, calls } = fakeStore();
    const { active, ends, started } = start(response, store);
    await started;
    assert.equal(active.size, 1);
    response.destroyed = true;
    response.emit("close");
    response.emit("close");
    assert.equal(calls.close, 1);
    assert.deepEqual(ends, [200]);
    assert.equal(active.size, 0);
  });

  it("serveWatch() ends the stream cleanly when the store ends it or the server stops", async () => {
    const first = new FakeResponse();
    const one = fakeStore();
    const a = start(first, one.store);
    await a.started;
    one.calls.sink!.end("expired");
    assert.equal(first.ended, true);
    assert.equal(one.calls.close, 0);

    const second = new FakeResponse();
    const two = fakeStore();
    const b = start(second, two.store);
    await b.started;
    for (const watch of b.active) watch.stop();
    assert.equal(second.ended, true);
    assert.equal(two.calls.close, 1);
    assert.deepEqual(b.ends, [200]);
  });

  it("serveWatch() ends the stream after timeoutSeconds", async () => {
    const response = new FakeResponse();
    const { store, calls } = fakeStore();
    const { started, ends, ended } = start(response, store, 0);
    await started;
    await ended;
    assert.equal(response.ended, true);
    assert.equal(calls.close, 1);
    assert.deepEqual(ends, [200]);
  });

  it("serveWatch() writes events sent while the store is still starting", async () => {
    const response = new FakeResponse();
    const { store } = fakeStore((sink) => sink.send({ type: "ADDED", object: user("early") }));
    await start(response, store).started;
    assert.equal(response.status, 200);
    assert.equal(response.chunks.length, 1);
  });

  it("serveWatch() answers a Status when the store refuses the watch before it starts", async () => {
    const response = new FakeResponse();
    const store = {
      watch: async () => {
        throw errors.badRequest("unable to parse requirement");
      },
    } as unknown as ResourceStore;
    const { ends, started } = start(response, store);
    await started;
    assert.equal(response.status, 400);
    assert.equal(JSON.parse(response.chunks[0]).reason, "BadRequest");
    assert.deepEqual(ends, [400]);
  });

  it("serveWatch() over a real HTTP response writes valid chunks: each event one chunk, then the last chunk", async () => {
    const server = await realWatchServer();
    try {
      const socket = server.connect();
      let raw = "";
      socket.setEncoding("latin1");
      socket.on("data", (data: string) => {
        raw += data;
      });
      const closed = new Promise((resolve) => socket.on("close", resolve));
      socket.write("GET /watch HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      const sink = await server.sink();
      // The same event object for two sends: the chunk is built once and written twice.
      const shared = { type: "MODIFIED" as const, object: user("é") };
      sink.send({ type: "ADDED", object: user("a") });
      sink.send(shared);
      sink.send(shared);
      sink.end("closed");
      await closed;
      const split = raw.indexOf("\r\n\r\n");
      assert.match(raw.slice(0, split), /transfer-encoding: chunked/i);
      const body = raw.slice(split + 4);
      // Parse the chunked body strictly: size line, exactly that many bytes, CRLF; a zero-size chunk ends it.
      const bytes = Buffer.from(body, "latin1");
      const lines: string[] = [];
      let at = 0;
      for (;;) {
        const eol = bytes.indexOf("\r\n", at);
        const size = Number.parseInt(bytes.subarray(at, eol).toString(), 16);
        at = eol + 2;
        if (size === 0) {
          assert.equal(bytes.subarray(at).toString(), "\r\n");
          break;
        }
        lines.push(bytes.subarray(at, at + size).toString("utf8"));
        assert.equal(bytes.subarray(at + size, at + size + 2).toString(), "\r\n");
        at += size + 2;
      }
      assert.deepEqual(
        lines.map((line) => JSON.parse(line)),
        [
          { type: "ADDED", object: user("a") },
          { type: "MODIFIED", object: user("é") },
          { type: "MODIFIED", object: user("é") },
        ],
      );
      assert.ok(lines.every((line) => line.endsWith("}\n")));
    } finally {
      server.close();
    }
  });

  it("serveWatch() over a real socket reports backpressure while the client does not read, and resumes", async () => {
    const server = await realWatchServer();
    const socket = server.connect();
    try {
      socket.write("GET /watch HTTP/1.1\r\nHost: x\r\n\r\n");
      socket.pause();
      const sink = await server.sink();
      const big = { ...user("big"), data: "x".repeat(64 * 1024) };
      // The kernel's buffers take some first; a client that never reads fills them (bounded by the loop).
      let sent = 0;
      while (sink.send({ type: "MODIFIED", object: big }) && sent < 10_000) sent++;
      assert.ok(sent < 10_000, "send() never reported a full buffer");
      assert.equal(server.calls.resume, 0);
      socket.resume();
      while (server.calls.resume === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(server.calls.resume, 1);
    } finally {
      socket.destroy();
      server.close();
    }
  });
});
