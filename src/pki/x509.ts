// @peculiar/x509 on node's WebCrypto. Import it from here, never directly: its dependency tsyringe needs the
// reflect-metadata API installed before the library loads.

import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };
