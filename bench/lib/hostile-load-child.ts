// One kind of hostile load against a platform, in its own process (bench/hostile.ts starts it niced, on the load
// CPU, so the admin sampler in the bench process is not delayed by it). Runs until SIGTERM, then prints one JSON
// line of counts on stdout. Kinds:
//   reader  --connections n: GET `path` in a loop on n keep-alive connections with `token` (one heavy user)
//   storm   --connections n: GET `path` without credentials in a loop (unauthenticated login starts)
//   flood   --connections n: open n idle TLS connections, each sending one GET /version every 30 s
//   slow    --connections n: GET `path` with `token` on n connections that read their answers 16 KiB a second
// Every connection binds to one of `--addresses` (loopback addresses, round robin): each kind is its own clients.
//
//   node bench/lib/hostile-load-child.ts <kind> --url <url> --ca <file> [--token t] [--path p]
//     [--connections n] [--addresses 127.0.2.1,127.0.2.2]

import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { connect as netConnect } from "node:net";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { parseArgs } from "node:util";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string" },
    ca: { type: "string" },
    token: { type: "string", default: "" },
    path: { type: "string", default: "/version" },
    connections: { type: "string", default: "1" },
    addresses: { type: "string", default: "127.0.0.1" },
  },
});
const kind = positionals[0];
const url = new URL(values.url ?? "");
const ca = readFileSync(values.ca ?? "", "utf8");
const connections = Number(values.connections);
const addresses = (values.addresses ?? "").split(",");
const address = (i: number) => addresses[i % addresses.length];
const counts: Record<string, number> = { ok: 0, tooMany: 0, otherStatus: 0, errors: 0, bytes: 0, open: 0, refused: 0 };
let stopping = false;

process.on("SIGTERM", () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ kind, ...counts })}\n`);
  process.exit(0);
});

const count = (status: number) => {
  if (status === 200 || status === 302 || status === 303) counts.ok++;
  else if (status === 429) counts.tooMany++;
  else counts.otherStatus++;
};

/** GETs in a loop on one keep-alive connection (its own agent), until stopped. */
function loop(i: number, withToken: boolean): void {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, localAddress: address(i) });
  const headers: Record<string, string> = withToken ? { authorization: `Bearer ${values.token}` } : {};
  const next = () => {
    if (stopping) return;
    const req = request(
      { host: url.hostname, port: url.port, path: values.path, agent, headers, servername: undefined },
      (res) => {
        res.on("data", (chunk: Buffer) => {
          counts.bytes += chunk.length;
        });
        res.on("end", () => {
          count(res.statusCode ?? 0);
          // A 429 says when to come back; this client, like a hostile one, does not wait long.
          setImmediate(next);
        });
      },
    );
    req.on("error", () => {
      counts.errors++;
      setTimeout(next, 100);
    });
    req.end();
  };
  next();
}

/** An idle TLS connection that asks for /version every 30 s, reopened if the server closes it. */
function idle(i: number): void {
  if (stopping) return;
  const tcp = netConnect({ host: url.hostname, port: Number(url.port), localAddress: address(i) });
  const socket: TLSSocket = tlsConnect({ socket: tcp, ca, servername: url.hostname });
  let secure = false;
  let timer: NodeJS.Timeout | undefined;
  socket.on("error", () => {});
  socket.on("data", () => {});
  socket.once("secureConnect", () => {
    secure = true;
    counts.open++;
    const ask = () => socket.write(`GET /version HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    ask();
    timer = setInterval(ask, 30_000);
  });
  socket.once("close", () => {
    clearInterval(timer);
    if (secure) counts.open--;
    else counts.refused++;
    // Try again a little later, as a flood would.
    setTimeout(() => idle(i), 1_000);
  });
}

/** A GET whose answer is read 16 KiB a second; the next one follows when it is complete. */
function slow(i: number): void {
  if (stopping) return;
  const tcp = netConnect({ host: url.hostname, port: Number(url.port), localAddress: address(i) });
  const socket: TLSSocket = tlsConnect({ socket: tcp, ca, servername: url.hostname });
  let pending = Buffer.alloc(0);
  socket.on("error", () => {
    counts.errors++;
  });
  socket.once("close", () => setTimeout(() => slow(i), 1_000));
  socket.once("secureConnect", () => {
    socket.pause();
    const ask = () =>
      socket.write(`GET ${values.path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${values.token}\r\n\r\n`);
    ask();
    const timer = setInterval(() => {
      const chunk = socket.read(16 * 1024) ?? socket.read();
      if (!chunk) return;
      counts.bytes += chunk.length;
      pending = Buffer.concat([pending, chunk]);
      const head = pending.indexOf("\r\n\r\n");
      if (head === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(pending.subarray(0, head).toString())?.[1] ?? 0);
      if (pending.length - head - 4 < length) return;
      count(Number(pending.subarray(9, 12).toString()));
      pending = pending.subarray(head + 4 + length);
      ask();
    }, 1_000);
    socket.once("close", () => clearInterval(timer));
  });
}

for (let i = 0; i < connections; i++) {
  if (kind === "reader") loop(i, true);
  else if (kind === "storm") loop(i, false);
  else if (kind === "flood") idle(i);
  else if (kind === "slow") slow(i);
  else throw new Error(`unknown kind ${kind}`);
}
