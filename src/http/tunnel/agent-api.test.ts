import assert from "node:assert/strict";
import { type ClientHttp2Session, connect, createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { callAgent } from "./agent-api.ts";

describe("callAgent()", () => {
  let server: Http2Server;
  let session: ClientHttp2Session;
  const timers = new Set<NodeJS.Timeout>();

  before(async () => {
    // An agent's API end: /info answers whole; /drip sends "{" and then a space every 20 ms, never the end.
    server = createServer((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      if (request.url?.endsWith("/info")) return void response.end(JSON.stringify({ spaces: [] }));
      response.write("{");
      const timer = setInterval(() => response.write(" "), 20);
      timers.add(timer);
      response.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    for (const timer of timers) clearInterval(timer);
    session.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("callAgent() resolves with the agent's whole answer", async () => {
    const answer = await callAgent<{ spaces: unknown[] }>(session, "GET", "/info", undefined, 30_000);
    assert.deepEqual(answer, { status: 200, body: { spaces: [] } });
  });

  it("callAgent() gives up an answer dripped past its deadline, however often a byte comes", async () => {
    // A timeout while idle never fires here: a byte comes every 20 ms, well within 300.
    await assert.rejects(callAgent(session, "GET", "/drip", undefined, 300), /did not answer GET \/drip within/);
  });
});
