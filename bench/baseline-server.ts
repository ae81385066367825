// The baseline: a bare node:https server that answers every GET with one fixed JSON body (the bytes of the
// platform's own user GET response, so the size matches) and the same response headers the platform sends.
// Run: node bench/baseline-server.ts <cert.pem> <key.pem> <body.json>   (prints "listening <port>")

import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

const [certFile, keyFile, bodyFile] = process.argv.slice(2);
if (!certFile || !keyFile || !bodyFile) {
  console.error("usage: node bench/baseline-server.ts <cert.pem> <key.pem> <body.json>");
  process.exit(2);
}
// A string body goes out in one write with the headers, as the platform sends it.
const body = readFileSync(bodyFile, "utf8");
const length = String(Buffer.byteLength(body));

const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
  if (req.method !== "GET") {
    res.writeHead(405, { "content-type": "application/json", "content-length": "2" });
    res.end("{}");
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": length });
  res.end(body);
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});

process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
});
