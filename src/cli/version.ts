// `virtualcluster version`: the client's version (and the Node.js running it), and when logged in the platform's,
// as `kubectl version` prints client and server. An unreachable platform still prints the client line, then fails.

import { Command } from "commander";
import { platformVersion } from "../apimachinery/version.ts";
import { readClientConfig } from "./client-config.ts";
import { platformClient } from "./platform-session.ts";
import { errorLine, runAction } from "./run-action.ts";

/** The client line: program version, Node.js version and platform of this process. */
export function clientVersionLine(): string {
  return `Client: virtualcluster ${platformVersion().version} (Node.js ${process.version}, ${process.platform}/${process.arch})`;
}

export function versionCommand(): Command {
  return new Command("version")
    .description("Print the version of virtualcluster and, when logged in, of the platform")
    .addHelpText("after", "\nExamples:\n  virtualcluster version")
    .action(
      runAction(async () => {
        process.stdout.write(`${clientVersionLine()}\n`);
        const login = readClientConfig().platform;
        if (!login) return;
        try {
          const server = await platformClient(login).request<{
            gitVersion?: string;
            version?: string;
            releaseChannel?: string;
          }>("GET", "/version");
          const channel = server.releaseChannel ? ` (release channel ${server.releaseChannel})` : "";
          process.stdout.write(
            `Platform: ${server.version ?? server.gitVersion ?? "unknown"} at ${login.host}${channel}\n`,
          );
        } catch (error) {
          throw new Error(`platform ${login.host}: ${errorLine(error)}`);
        }
      }),
    );
}
