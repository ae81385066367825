// Checks, before anything is written, that the platform can listen where it was asked to: a first start that
// failed on a taken port after bootstrapping would have shown the admin key and password to nobody, and the next
// start never shows them again.

import { createServer } from "node:net";

/** Resolves when host:port can be bound now (port 0 always can); rejects with a one-line error that says what to do. */
export function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (error.code === "EADDRINUSE") {
        reject(new Error(`${where} is already in use: stop what listens there, or choose another with --port`));
      } else if (error.code === "EACCES") {
        reject(
          new Error(`cannot listen on ${where}: permission denied (ports below 1024 need privileges); use --port`),
        );
      } else if (error.code === "EADDRNOTAVAIL") {
        reject(new Error(`cannot listen on ${where}: no such local address; check --host`));
      } else {
        reject(new Error(`cannot listen on ${where}: ${error.message}`));
      }
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
