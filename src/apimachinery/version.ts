// The body of GET /version: the platform's own version plus the Kubernetes minor it speaks (some kubectl
// dispatchers pick a client by `minor`).

import { readFileSync } from "node:fs";

const packageVersion = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export const KUBERNETES_MAJOR = "1";
export const KUBERNETES_MINOR = "32";

export function platformVersion(): Record<string, string> {
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    gitVersion: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0-virtualcluster-platform.${packageVersion}`,
    version: packageVersion,
    gitCommit: "",
    gitTreeState: "",
    buildDate: "",
    goVersion: "",
    compiler: "node",
    platform: `${process.platform}/${process.arch}`,
  };
}
