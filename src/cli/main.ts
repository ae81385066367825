// The `virtualcluster` program. A long-running command needs settings that only a new process image can have (V8
// flags, malloc tunables: process-settings.ts); it re-executes itself with them first, before loading the command
// line parser and the command, which the re-executed process loads anyway.

import { ensureProcessSettings } from "./process-settings.ts";

ensureProcessSettings(process.argv);
await import("./dispatch.ts");
