// `virtualcluster platform ...`: the management platform's commands.

import { join } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { pino } from "pino";
import { ADMIN_KEY_FILE } from "../platform/bootstrap.ts";
import { ADMIN_KUBECONFIG_FILE, startPlatform } from "../platform/platform.ts";

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("must be a port number (0-65535)");
  return n;
}

export function platformCommand(): Command {
  const platform = new Command("platform").description("Run and use the management platform");
  platform
    .command("start")
    .description("Start the management platform (HTTPS, embedded storage in the data directory)")
    .option("--data-dir <dir>", "data directory (storage, certificates, admin credentials)", "./data")
    .option("--host <host>", "address to listen on and to put in certificates and kubeconfigs", "127.0.0.1")
    .option("--port <port>", "port to listen on", port, 8443)
    .option("--tls-cert <file>", "serving certificate (PEM) instead of the generated one")
    .option("--tls-key <file>", "key of --tls-cert (PEM)")
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform start\n  virtualcluster platform start --data-dir /var/lib/vcp --host 0.0.0.0 --port 443",
    )
    .action(async (opts: { dataDir: string; host: string; port: number; tlsCert?: string; tlsKey?: string }) => {
      if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey)) {
        platform.error("error: --tls-cert and --tls-key go together");
      }
      const logger = pino({ level: process.env.LOG_LEVEL ?? "info" }, pino.destination(2));
      const running = await startPlatform({
        dataDir: opts.dataDir,
        host: opts.host,
        port: opts.port,
        tlsCertFile: opts.tlsCert,
        tlsKeyFile: opts.tlsKey,
        logger,
      });
      const out = process.stdout;
      out.write(`Platform listening on ${running.url}\n`);
      if (running.createdAdminKey) {
        out.write(
          `\nCreated user "admin". Its access key is shown only this once:\n\n  ${running.createdAdminKey}\n\n` +
            `It is also stored in ${join(running.dataDir, ADMIN_KEY_FILE)} (mode 0600).\n`,
        );
      }
      out.write(`Try: kubectl --kubeconfig ${join(running.dataDir, ADMIN_KUBECONFIG_FILE)} get users\n`);
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, "shutting down");
        await running.close();
        process.exit(0);
      };
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
    });
  return platform;
}
