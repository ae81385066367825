// The image's HEALTHCHECK (no shell, no curl in the image): GET /readyz of the server this container runs, with no
// setting to keep in step with the command's --host and --port. It finds the TCP ports the container's other
// processes listen on (their socket inodes in /proc/<pid>/fd, matched in /proc/net/tcp and tcp6) and asks each one;
// healthy (exit 0) when one answers 200. VIRTUALCLUSTER_HEALTH_URL names the URL instead. Like the kubelet's HTTPS
// probes it does not verify the certificate: it only asks the process next to it whether it is ready.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { request } from "node:https";

const TIMEOUT_MS = 4_000;
const LISTEN = "0A";

/** inode -> "address:port" of every listening TCP socket in this network namespace. */
function listeningSockets() {
  const sockets = new Map();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines = [];
    try {
      lines = readFileSync(file, "utf8").trim().split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== LISTEN) continue;
      const [address, port] = fields[1].split(":");
      sockets.set(fields[9], { host: probeHost(address), port: Number.parseInt(port, 16) });
    }
  }
  return sockets;
}

/** The address to probe for a listening address in /proc's hex (any address: the loopback). */
function probeHost(hex) {
  if (hex.length === 8) {
    const ip = hex
      .match(/../g)
      .reverse()
      .map((byte) => Number.parseInt(byte, 16))
      .join(".");
    return ip === "0.0.0.0" ? "127.0.0.1" : ip;
  }
  // IPv6: four little-endian 32-bit words; any address and the IPv4-mapped any address are probed on the loopback.
  const words = hex.match(/.{8}/g).map((word) => word.match(/../g).reverse().join(""));
  const groups = words.join("").match(/.{4}/g);
  if (/^0+$/.test(groups.join("")) || groups.join("") === "00000000000000000000ffff00000000") return "127.0.0.1";
  return `[${groups.join(":")}]`;
}

/** Socket inodes held open by the other processes of this container. */
function ownSocketInodes() {
  const inodes = new Set();
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)) {
    let fds = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.add(match[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  return inodes;
}

function readyz(url) {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: TIMEOUT_MS }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ url, status: res.statusCode, body: body.trim() }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (error) => resolve({ url, error: error.message }));
    req.end();
  });
}

function urls() {
  if (process.env.VIRTUALCLUSTER_HEALTH_URL) return [process.env.VIRTUALCLUSTER_HEALTH_URL];
  const sockets = listeningSockets();
  const found = new Set();
  for (const inode of ownSocketInodes()) {
    const socket = sockets.get(inode);
    if (socket) found.add(`https://${socket.host}:${socket.port}/readyz`);
  }
  return [...found];
}

const targets = urls();
if (targets.length === 0) {
  process.stdout.write("not ready: nothing listens yet\n");
  process.exit(1);
}
const answers = await Promise.all(targets.map(readyz));
const ready = answers.find((answer) => answer.status === 200);
for (const answer of ready ? [ready] : answers) {
  process.stdout.write(`${answer.url}: ${answer.error ?? `${answer.status} ${answer.body}`}\n`);
}
process.exit(ready ? 0 : 1);
