import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientMetadata } from "./platform-oidc-provider.ts";

describe("clientMetadata()", () => {
  it("clientMetadata() makes a client without secret public and one with a secret authenticate as it asks", () => {
    const grafana = { name: "Grafana", clientId: "g", clientSecret: "s3cret", redirectURIs: ["https://g.example/cb"] };
    assert.equal(clientMetadata(grafana, "ES256", true).token_endpoint_auth_method, "client_secret_basic");
    assert.equal(clientMetadata(grafana, "ES256", false).token_endpoint_auth_method, "client_secret_post");
    assert.equal(clientMetadata(grafana, "RS256", false).id_token_signed_response_alg, "RS256");
    const cli = clientMetadata({ name: "", clientId: "cli", clientSecret: "", redirectURIs: [] }, "ES256", true);
    assert.equal(cli.token_endpoint_auth_method, "none");
    assert.equal(cli.client_secret, undefined);
    assert.equal(cli.client_name, "cli");
    assert.deepEqual(cli.grant_types, ["authorization_code", "refresh_token"]);
  });

  it("clientMetadata() lists only web addresses the metadata schema accepts (the redirect rules check the rest)", () => {
    const client = {
      name: "a",
      clientId: "a",
      clientSecret: "x",
      redirectURIs: ["https://*.a.example/cb", "https://a.example:*/cb"],
    };
    assert.deepEqual(clientMetadata(client, "ES256", false).redirect_uris, ["https://*.a.example/cb"]);
  });
});
