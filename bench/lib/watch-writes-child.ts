// The client side of bench/watch-writes.ts: opens `watchers` watch streams on /a and as many on /b (keep-alive
// HTTPS, the test CA), counts the lines each stream receives, and tells the parent once every stream of a path has
// received the number of events it asks for.

import { Agent, request } from "node:https";

type Path = "a" | "b";
const { port, watchers, ca } = JSON.parse(process.argv[2]) as { port: number; watchers: number; ca: string };
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, ca });
const received: Record<Path, number[]> = { a: [], b: [] };
let opened = 0;
let wanted: { path: Path; events: number } | undefined;

function check(path: Path): void {
  if (!wanted || wanted.path !== path || received[path].some((count) => count < wanted!.events)) return;
  const reached = wanted;
  wanted = undefined;
  process.send?.({ reached });
}

function open(path: Path, index: number): void {
  received[path][index] = 0;
  const watch = request({ host: "127.0.0.1", port, path: `/${path}`, agent }, (response) => {
    if (++opened === 2 * watchers) process.send?.({ opened });
    response.on("data", (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) received[path][index]++;
      check(path);
    });
  });
  watch.end();
}

process.on("message", (message: { want: { path: Path; events: number } }) => {
  wanted = message.want;
  check(wanted.path);
});
for (let i = 0; i < watchers; i++) {
  open("a", i);
  open("b", i);
}
