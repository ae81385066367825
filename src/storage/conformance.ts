// The backend-agnostic conformance suite: every KeyValueStore backend runs it from its own test file, e.g.
//   describeStoreConformance("SqliteStore(:memory:)", () => openSqliteStore({ path: ":memory:" }));
// `open` must return a fresh, empty store on every call; the suite closes each store it opens.

import { describe } from "node:test";
import { modelConformance } from "./conformance-model.ts";
import { readConformance } from "./conformance-reads.ts";
import type { OpenStore } from "./conformance-support.ts";
import { watchConformance } from "./conformance-watch.ts";
import { writeConformance } from "./conformance-writes.ts";

export function describeStoreConformance(name: string, open: OpenStore): void {
  describe(`${name} conformance`, () => {
    writeConformance(name, open);
    readConformance(name, open);
    watchConformance(name, open);
    modelConformance(name, open);
  });
}
