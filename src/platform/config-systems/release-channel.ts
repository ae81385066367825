// cloud.releaseChannel where people and tools read versions: /version (and so `virtualcluster version` and kubectl
// version's server line) and the console's footer.

import { platformVersion } from "../../apimachinery/version.ts";
import type { LiveSettings } from "../../config/settings.ts";

/** The body of /version: the platform's version, with `releaseChannel` when the Config names one. */
export function versionWithReleaseChannel(settings: LiveSettings): () => Record<string, string> {
  const base = platformVersion();
  return () => {
    const channel = settings.current().cloud.releaseChannel;
    return channel ? { ...base, releaseChannel: channel } : base;
  };
}
