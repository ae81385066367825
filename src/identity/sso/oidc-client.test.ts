import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, it, mock } from "node:test";
import { type JWK, SignJWT } from "jose";
import { testTls } from "../../../test/support/test-ca.ts";
import { OidcClient } from "./oidc-client.ts";
import { ProviderHttp } from "./provider-http.ts";
import { SsoFailure } from "./types.ts";

describe("OidcClient.finish() and its ID token checks (openid-client)", () => {
  let server: Server;
  let issuer: string;
  let client: OidcClient;
  let published: JWK[] = [];
  let jwksFetches = 0;
  let tokenForm: URLSearchParams | undefined;
  /** The ID token the token endpoint answers next. */
  let nextIdToken: () => Promise<string>;
  const key = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const rotated = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const stranger = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = (k: typeof key, kid: string): JWK => ({ ...k.publicKey.export({ format: "jwk" }), kid, alg: "ES256" });

  const token = (
    signer: typeof key,
    kid: string,
    claims: Record<string, unknown> = {},
    life: { iat?: number; exp?: number; aud?: string | string[]; iss?: string } = {},
  ) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ nonce: "n-1", ...claims })
      .setProtectedHeader({ alg: "ES256", kid })
      .setIssuer(life.iss ?? issuer)
      .setAudience(life.aud ?? "client-1")
      .setSubject("user-1")
      .setIssuedAt(life.iat ?? now)
      .setExpirationTime(life.exp ?? now + 300)
      .sign(signer.privateKey);
  };

  before(async () => {
    const tls = await testTls("oidc unit");
    server = createServer({ cert: tls.certPem, key: tls.keyPem }, (request, response) => {
      response.setHeader("content-type", "application/json");
      if (request.url === "/.well-known/openid-configuration") {
        response.end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            id_token_signing_alg_values_supported: ["ES256"],
          }),
        );
      } else if (request.url === "/token") {
        let body = "";
        request.on("data", (chunk) => {
          body += chunk;
        });
        request.on("end", async () => {
          tokenForm = new URLSearchParams(body);
          response.end(JSON.stringify({ access_token: "at", token_type: "Bearer", id_token: await nextIdToken() }));
        });
      } else if (request.url === "/jwks") {
        jwksFetches++;
        response.end(JSON.stringify({ keys: published }));
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    published = [jwk(key, "k1")];
    nextIdToken = () => token(key, "k1");
    client = new OidcClient({
      issuer,
      clientId: "client-1",
      scopes: ["openid"],
      http: new ProviderHttp("OIDC provider", { caPem: tls.caPem }),
    });
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  /** A whole finish() whose token endpoint answers `idToken`, with the nonce `nonce` expected. */
  const finish = (idToken: Promise<string> | string, nonce = "n-1") => {
    nextIdToken = async () => idToken;
    return client.finish({ code: "c-1" }, { verifier: "v".repeat(43), nonce }, "https://platform/cb");
  };
  const refused = async (jwt: Promise<string> | string, nonce: string, pattern: RegExp) => {
    await assert.rejects(finish(jwt, nonce), (error: unknown) => {
      assert.ok(error instanceof SsoFailure, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  };

  it("accepts a token of the provider's key for this client and nonce", async () => {
    const { claims, accessToken } = await finish(token(key, "k1"));
    assert.equal(claims.sub, "user-1");
    assert.equal(accessToken, "at");
  });

  it("refuses an expired token", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(token(key, "k1", {}, { iat: now - 3600, exp: now - 600 }), "n-1", /expired/);
  });

  it("refuses a token signed by another key under a known key id", async () => {
    await refused(token(stranger, "k1"), "n-1", /signature does not verify/);
  });

  it("refuses the wrong audience, issuer or nonce", async () => {
    await refused(token(key, "k1", {}, { aud: "someone-else" }), "n-1", /claim aud/);
    await refused(token(key, "k1", {}, { iss: "https://other.example.com" }), "n-1", /claim iss/);
    await refused(token(key, "k1"), "n-2", /wrong nonce/);
  });

  it("refuses several audiences without this client as authorized party", async () => {
    await refused(token(key, "k1", { azp: "other" }, { aud: ["client-1", "other"] }), "n-1", /another party/);
    await refused(token(key, "k1", {}, { aud: ["client-1", "other"] }), "n-1", /another party/);
  });

  it("follows a key rotation: an unknown key id refetches the JWKS once the cached set is a minute old", async () => {
    published = [jwk(key, "k1"), jwk(rotated, "k2")];
    const before = jwksFetches;
    // Right after a fetch, an unknown key id is refused without asking the provider again (no refetch flood).
    await refused(token(rotated, "k2"), "n-1", /no key of the provider's JWKS/);
    assert.equal(jwksFetches, before);
    mock.timers.enable({ apis: ["Date"], now: Date.now() });
    try {
      mock.timers.tick(61_000);
      const { claims } = await finish(token(rotated, "k2"));
      assert.equal(claims.sub, "user-1");
      assert.equal(jwksFetches, before + 1);
    } finally {
      mock.timers.reset();
    }
  });

  it("refuses a key id the provider does not publish", async () => {
    await refused(token(stranger, "k9"), "n-1", /no key of the provider's JWKS/);
  });

  it("finish() sends the code with the PKCE verifier and the configured resource, and verifies the ID token", async () => {
    const withResource = new OidcClient({
      issuer,
      clientId: "client-1",
      clientSecret: "s3cret",
      scopes: ["openid"],
      http: new ProviderHttp("OIDC provider", { insecure: true }),
      tokenParams: { resource: "https://api.example.com" },
    });
    const start = await withResource.authorizationUrl("state-1", "https://platform/cb");
    const url = new URL(start.url);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    nextIdToken = () => token(key, "k1");
    const { claims } = await withResource.finish(
      { code: "c-1" },
      { ...start.state, nonce: "n-1" },
      "https://platform/cb",
    );
    assert.equal(claims.sub, "user-1");
    assert.equal(tokenForm?.get("resource"), "https://api.example.com");
    assert.equal(tokenForm?.get("code_verifier"), start.state.verifier);
    assert.equal(tokenForm?.get("client_secret"), "s3cret");
  });

  it("finish() reports the provider's error on the callback", async () => {
    await assert.rejects(
      client.finish({ error: "access_denied", error_description: "no" }, {}, "https://p/cb"),
      /refused the login: access_denied \(no\)/,
    );
  });
});
