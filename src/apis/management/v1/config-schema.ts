// Config: schema and the type derived from it (no run-time imports beyond schema modules: the console imports the
// type). spec.raw is the YAML as written; status is the parsed config with defaults (src/config/schema.ts).

import { type KindOf, object, string } from "../../../apimachinery/schema-builders.ts";
import { REDACTED } from "../../../config/redaction-marker.ts";
import { configSchema as platformConfigSchema } from "../../../config/schema.ts";

export const configSchema = {
  spec: object(
    {
      raw: string(
        `The platform config as YAML, as written. Secrets in it read as "${REDACTED}"; writing that marker back keeps the stored secret.`,
      ),
    },
    "The platform config as written.",
  ),
  status: platformConfigSchema,
};

export type Config = KindOf<typeof configSchema>;
