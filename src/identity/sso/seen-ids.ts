// One-time identifiers with an expiry (SAML assertion IDs), kept in the platform's store so a replay is refused on
// every replica (and after a restart): /internal/sso/seen/<sha256 of the id>. add() answers false for an id already
// seen and not yet expired; of two replicas adding the same id at once, one wins (a create). Expired ids are
// replaced by a new add() and deleted by the leader's sweeper.

import { ExpiringRecords } from "../../storage/expiring-records.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { SSO_STATE_PREFIX } from "./login-state.ts";

export const SEEN_IDS_PREFIX = `${SSO_STATE_PREFIX}seen/`;

export class SeenIds {
  readonly #records: ExpiringRecords<never>;

  constructor(options: { storage: KeyValueStore; now?: () => number }) {
    this.#records = new ExpiringRecords({ storage: options.storage, prefix: SEEN_IDS_PREFIX, now: options.now });
  }

  /** Records `id` until `untilMs`; false when it was already recorded (a replay). */
  add(id: string, untilMs: number): Promise<boolean> {
    return this.#records.claim(id, untilMs);
  }
}
