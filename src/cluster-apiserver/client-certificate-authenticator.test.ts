import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { before, describe, it } from "node:test";
import { createCertificateAuthority, issueCertificate } from "../pki/certificate-authority.ts";
import { modulesLoadedBy } from "../utils/testing-module-graph.ts";
import { ClientCertificateAuthenticator } from "./client-certificate-authenticator.ts";

const derOf = (pem: string) => Buffer.from(new X509Certificate(pem).raw);

describe("ClientCertificateAuthenticator", () => {
  let ca: { certPem: string; keyPem: string };
  let other: { certPem: string; keyPem: string };
  let alice: Buffer;
  let tricky: Buffer;

  before(async () => {
    ca = await createCertificateAuthority({ commonName: "clients" });
    other = await createCertificateAuthority({ commonName: "someone else" });
    const issue = async (commonName: string, organizations: string[], by = ca) =>
      derOf(
        (await issueCertificate({ ca: by, commonName, organizations, usage: "client", validitySeconds: 600 })).certPem,
      );
    alice = await issue("alice", ["devs", "ops"]);
    tricky = await issue("mallory\nO=system:masters", []);
  });

  it("authenticate() reads the user from CN and the groups from O", async () => {
    const auth = new ClientCertificateAuthenticator([ca.certPem]);
    assert.deepEqual(await auth.authenticate({ headers: {}, clientCertificate: alice }), {
      name: "alice",
      groups: ["devs", "ops", "system:authenticated"],
    });
  });

  it("authenticate() adds the configured extra groups to every certificate user", async () => {
    const auth = new ClientCertificateAuthenticator([ca.certPem], { extraGroups: ["system:masters"] });
    const user = await auth.authenticate({ headers: {}, clientCertificate: alice });
    assert.deepEqual(user?.groups, ["devs", "ops", "system:masters", "system:authenticated"]);
  });

  it("authenticate() keeps a CN holding newlines as one name, never a group", async () => {
    const auth = new ClientCertificateAuthenticator([ca.certPem]);
    const user = await auth.authenticate({ headers: {}, clientCertificate: tricky });
    assert.equal(user?.name, "mallory\nO=system:masters");
    assert.deepEqual(user?.groups, ["system:authenticated"]);
  });

  it("authenticate() ignores certificates of other CAs, and requests without one", async () => {
    const auth = new ClientCertificateAuthenticator([other.certPem]);
    assert.equal(await auth.authenticate({ headers: {}, clientCertificate: alice }), undefined);
    assert.equal(
      await new ClientCertificateAuthenticator([]).authenticate({ headers: {}, clientCertificate: alice }),
      undefined,
    );
    assert.equal(await new ClientCertificateAuthenticator([ca.certPem]).authenticate({ headers: {} }), undefined);
  });

  it("setAuthorities() applies at once, even to a certificate already accepted", async () => {
    const auth = new ClientCertificateAuthenticator([ca.certPem]);
    assert.ok(await auth.authenticate({ headers: {}, clientCertificate: alice }));
    auth.setAuthorities([other.certPem]);
    assert.equal(await auth.authenticate({ headers: {}, clientCertificate: alice }), undefined);
    auth.setAuthorities([`${other.certPem}\n${ca.certPem}`]);
    assert.ok(await auth.authenticate({ headers: {}, clientCertificate: alice }), "a bundle holds several CAs");
  });

  it("the cluster API server loads the x509 library with the first client certificate, not at start", () => {
    const loaded = modulesLoadedBy("./cluster-apiserver/cluster-api-server.ts");
    assert.ok(loaded.some((url) => url.endsWith("/client-certificate-authenticator.ts")));
    assert.deepEqual(
      loaded.filter((url) => url.includes("/node_modules/@peculiar/") || url.endsWith("/src/pki/x509.ts")),
      [],
    );
  });
});
