// The watch stream's write path alone, A/B in one process (issue 36): `serveWatch` of this tree and of another
// (`--other <tree>`, e.g. a checkout of main) each serve `--watchers` TLS watch streams from one node:https server
// on the server CPU; a client process on the load CPU reads them all. Rounds alternate the two: each sends
// `--events` events, one per turn of the event loop, each only once every stream of that side has the previous one
// (no backlog, as at 20 updates/s), and measures this process's CPU. Prints CPU per delivered event per round and
// the medians. The store and hub are left out: what differs is how an event reaches the sockets.
//
//   node bench/watch-writes.ts --other /work/main [--watchers 500] [--events 100] [--rounds 8]

import { fork } from "node:child_process";
import type { ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { testTls } from "../test/support/test-ca.ts";
import { benchUser } from "./lib/api.ts";
import { LOAD_CPU, SERVER_CPU } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";

const { values } = parseArgs({
  options: {
    other: { type: "string" },
    watchers: { type: "string", default: "500" },
    events: { type: "string", default: "100" },
    rounds: { type: "string", default: "8" },
  },
});
if (!values.other)
  throw new Error("usage: node bench/watch-writes.ts --other <tree> [--watchers n] [--events n] [--rounds n]");
const watchers = Number(values.watchers);
const events = Number(values.events);
const rounds = Number(values.rounds);

type Path = "a" | "b";
interface Sink {
  send(event: unknown): boolean;
}
type ServeWatch = (options: Record<string, unknown>) => Promise<void>;
interface WatchModule {
  serveWatch: ServeWatch;
  encodeWatchEventJson: unknown;
}
const trees: Record<Path, string> = { a: values.other, b: new URL("..", import.meta.url).pathname };
const modules: Record<Path, WatchModule> = {
  a: await import(`${trees.a}/src/http/watch.ts`),
  b: await import(`${trees.b}/src/http/watch.ts`),
};
const sinks: Record<Path, Sink[]> = { a: [], b: [] };

pinToCpu(process.pid, SERVER_CPU);
const tls = await testTls("watch-writes bench");
const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (request, response: ServerResponse) => {
  const path: Path = request.url === "/a" ? "a" : "b";
  const store = {
    watch: async (_context: unknown, _options: unknown, sink: Sink) => {
      sinks[path].push(sink);
      return { resume() {}, close() {} };
    },
  };
  const { serveWatch, encodeWatchEventJson } = modules[path];
  void serveWatch({
    response,
    store,
    context: {},
    options: {},
    encode: encodeWatchEventJson,
    active: new Set(),
    onEnd() {},
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const child = fork(new URL("./lib/watch-writes-child.ts", import.meta.url).pathname, [
  JSON.stringify({ port, watchers, ca: tls.caPem }),
]);
if (child.pid) pinToCpu(child.pid, LOAD_CPU);
const heard = (matches: (message: Record<string, unknown>) => boolean) =>
  new Promise<void>((resolve) => {
    const listener = (message: Record<string, unknown>) => {
      if (!matches(message)) return;
      child.off("message", listener);
      resolve();
    };
    child.on("message", listener);
  });
await heard((message) => message.opened !== undefined);

const user = benchUser({ name: "bench-watch" });
const sent: Record<Path, number> = { a: 0, b: 0 };
const micros: Record<Path, number[]> = { a: [], b: [] };
// Round 0 warms both up and is not counted.
for (let round = 0; round <= rounds; round++) {
  for (const path of (round % 2 ? ["b", "a"] : ["a", "b"]) as Path[]) {
    const before = process.cpuUsage();
    for (let e = 0; e < events; e++) {
      const object = { ...user, metadata: { ...(user.metadata as object), resourceVersion: String(sent[path] + 1) } };
      await new Promise((resolve) => setImmediate(resolve));
      for (const sink of sinks[path]) sink.send({ type: "MODIFIED", object });
      const total = ++sent[path];
      const reached = heard(
        (m) =>
          (m.reached as { path?: string; events?: number })?.events === total &&
          (m.reached as { path: string }).path === path,
      );
      child.send({ want: { path, events: total } });
      await reached;
    }
    const used = process.cpuUsage(before);
    if (round > 0) micros[path].push((used.user + used.system) / (events * watchers));
  }
}
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
for (const path of ["a", "b"] as Path[]) {
  console.log(
    `${path === "a" ? "other" : "this "} tree ${trees[path]}: server µs per delivered event, by round ` +
      `${micros[path].map((v) => v.toFixed(2)).join(" ")}; median ${median(micros[path]).toFixed(2)}`,
  );
}
child.kill();
server.closeAllConnections();
server.close();
