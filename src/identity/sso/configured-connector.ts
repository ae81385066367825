// What every connector shares: its id, its provider kind, the config block it was built from and the HTTPS client
// it reaches its provider with.

import type { ProviderHttp } from "./provider-http.ts";
import type { CallbackInput, Connector, LoginStart, SsoIdentity, StartInput } from "./types.ts";

export abstract class ConfiguredConnector implements Connector {
  readonly id: string;
  abstract readonly kind: string;
  /** The provider block as configured (secrets included: never log it). */
  protected readonly config: Record<string, unknown>;
  protected readonly http: ProviderHttp;

  constructor(id: string, config: Record<string, unknown>, http: ProviderHttp) {
    this.id = id;
    this.config = config;
    this.http = http;
  }

  abstract start(input: StartInput): Promise<LoginStart>;
  abstract finish(input: CallbackInput): Promise<SsoIdentity>;
}
