// What the tests that run README sections as written share: the `virtualcluster` program on a PATH directory as an
// installed copy puts it there (run by the test's Node 24, whatever `node` the PATH has).

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PROGRAM = fileURLToPath(new URL("../../bin/virtualcluster.js", import.meta.url));

/** Writes `<bin>/virtualcluster`, which runs this checkout's program. */
export function installProgram(bin: string): void {
  writeFileSync(join(bin, "virtualcluster"), `#!/bin/sh\nexec '${process.execPath}' '${PROGRAM}' "$@"\n`);
  chmodSync(join(bin, "virtualcluster"), 0o755);
}
