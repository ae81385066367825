// Config: schema and the type derived from it (no run-time imports beyond schema modules: the console imports the
// type). spec.raw is the YAML as written; status is the parsed config with defaults (src/config/schema.ts) and the
// fields the platform maintains itself: its systems' conditions and the maintenance window's schedule.

import {
  boolean,
  type KindOf,
  object,
  type Static,
  string,
  stringList,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";
import { REDACTED } from "../../../config/redaction-marker.ts";
import { configProperties } from "../../../config/schema.ts";
import { conditionsSchema } from "./project-schema.ts";

const maintenanceSchema = object(
  {
    nextWindowStart: timestamp("When the maintenance window opens next (or opened, while it is open)."),
    nextWindowEnd: timestamp("When that window closes."),
    open: boolean("Whether the window is open now: disruptive background work runs only then."),
    lastRun: object(
      {
        time: timestamp("When disruptive work last ran in a window."),
        results: stringList("What each task did."),
      },
      "The last run in a window.",
      ["time", "results"],
    ),
  },
  "The maintenance window as the platform schedules it (set by the platform; absent without a window).",
);

/** Fields of status the platform maintains, never parsed from spec.raw. */
export const PLATFORM_OWNED = ["conditions", "maintenance"] as const;

export const configSchema = {
  spec: object(
    {
      raw: string(
        `The platform config as YAML, as written. Secrets in it read as "${REDACTED}"; writing that marker back keeps the stored secret.`,
      ),
    },
    "The platform config as written.",
  ),
  status: object(
    { ...configProperties, conditions: conditionsSchema, maintenance: maintenanceSchema },
    "The parsed platform config with defaults filled in, and the platform's own conditions and maintenance schedule.",
  ),
};

export type Config = KindOf<typeof configSchema>;
/** The maintenance window as the platform schedules it (cloud.maintenanceWindow). */
export type MaintenanceStatus = Static<typeof maintenanceSchema>;
/** Fields of status the platform maintains (its systems' conditions, the maintenance window). */
export type PlatformOwnedStatus = Pick<NonNullable<Config["status"]>, (typeof PLATFORM_OWNED)[number]>;
