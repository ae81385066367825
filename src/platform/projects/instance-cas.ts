// The client-certificate CA of every virtual cluster instance. Its private key lives only in the platform's store,
// under `/internal/instancecas/<namespace>/<name>` (served by no resource), bound to the instance's uid; its
// certificate is published in the instance's status.clientCertificateAuthority.
//
// A CA is made while the instance is created (so the create response already shows it) and kept in memory until the
// instance is stored: a failed or dry-run create therefore stores nothing. The first later use (the project
// controller seeing the instance, or a kubeconfig) writes it to storage. Should the process stop in between, the key
// is gone: the next use makes a new CA and publishes it instead. Deleting the instance deletes the key.

import { isStatusError } from "../../apimachinery/errors.ts";
import type { InstanceAuthority, VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import { type CertificateAuthority, createCertificateAuthority } from "../../pki/certificate-authority.ts";
import { KeyedQueue } from "../../registry/keyed-queue.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { RequestContext } from "../../registry/types.ts";
import { type KeyValueStore, StorageError } from "../../storage/types.ts";

export const INSTANCE_CA_PREFIX = "/internal/instancecas/";
const MANAGER = "virtualcluster-platform-instance-ca";
/** How long a CA made for a create waits to be stored with its instance before it is forgotten. */
const PENDING_MS = 10 * 60_000;
/**
 * CAs waiting at most (about 3 KB each): dry-run and failed creates make them too, so past this the oldest is
 * forgotten first, as one is after PENDING_MS, and its instance's first use makes a new one.
 */
export const MAX_PENDING_CAS = 1_000;
const CA_VALIDITY_DAYS = 3650;
const WRITE_ATTEMPTS = 5;

interface StoredAuthority extends CertificateAuthority {
  uid: string;
}

export function instanceCaKey(namespace: string, name: string): string {
  return `${INSTANCE_CA_PREFIX}${namespace}/${name}`;
}

export class InstanceCertificateAuthorities implements InstanceAuthority {
  private readonly storage: KeyValueStore;
  private readonly instances: () => GenericStore;
  private readonly pending = new Map<string, { ca: CertificateAuthority; expires: number }>();
  private readonly writes = new KeyedQueue();
  /** Contexts of the platform's own status writes: the only ones that may set the published CA. */
  private readonly own = new WeakSet<RequestContext>();

  private readonly maxPending: number;

  /** `maxPending`: CAs kept waiting for their instance at most (default MAX_PENDING_CAS). */
  constructor(storage: KeyValueStore, instances: () => GenericStore, { maxPending = MAX_PENDING_CAS } = {}) {
    this.storage = storage;
    this.instances = instances;
    this.maxPending = maxPending;
  }

  async prepare(instance: { namespace: string; name: string; uid: string }): Promise<string> {
    const now = Date.now();
    // Oldest first (the Map keeps the order they came in), only as far as the first one still waiting.
    for (const [uid, entry] of this.pending) {
      if (entry.expires >= now && this.pending.size < this.maxPending) break;
      this.pending.delete(uid);
    }
    const ca = await createCertificateAuthority({
      commonName: `virtualcluster-client-ca-${instance.uid}`,
      validityDays: CA_VALIDITY_DAYS,
    });
    this.pending.set(instance.uid, { ca, expires: now + PENDING_MS });
    return ca.certPem;
  }

  writesServerStatus(context: RequestContext): boolean {
    return this.own.has(context);
  }

  /** The CA that signs client certificates for this stored instance: stored (and published) once this resolves. */
  signer(instance: VirtualClusterInstance): Promise<CertificateAuthority> {
    const { namespace = "", name = "" } = instance.metadata;
    return this.writes.run(instanceCaKey(namespace, name), () => this.ensure(instance));
  }

  /** Deletes the key of a deleted instance (a re-created instance of the same name has another uid and key). */
  async remove(namespace: string, name: string, uid: string): Promise<void> {
    const key = instanceCaKey(namespace, name);
    await this.writes.run(key, async () => {
      const record = await this.storage.get(key);
      if (!record || (JSON.parse(record.value) as StoredAuthority).uid !== uid) return;
      await this.storage.delete(key, record.revision).catch(ignoreStorageRace);
    });
    this.pending.delete(uid);
  }

  /** Deletes stored keys whose instance is gone (`live`: storage key of the CA -> instance uid). */
  async removeOrphans(live: Map<string, string>): Promise<void> {
    const { records } = await this.storage.list({ prefix: INSTANCE_CA_PREFIX });
    for (const record of records) {
      if (live.get(record.key) === (JSON.parse(record.value) as StoredAuthority).uid) continue;
      await this.writes.run(record.key, () =>
        this.storage.delete(record.key, record.revision).catch(ignoreStorageRace),
      );
    }
  }

  private async ensure(instance: VirtualClusterInstance): Promise<CertificateAuthority> {
    const { namespace = "", name = "", uid = "" } = instance.metadata;
    const key = instanceCaKey(namespace, name);
    const published = instance.status?.clientCertificateAuthority;
    for (let attempt = 1; ; attempt++) {
      const record = await this.storage.get(key);
      const stored = record ? (JSON.parse(record.value) as StoredAuthority) : undefined;
      if (stored?.uid === uid) {
        if (stored.certPem !== published) await this.publish(instance, stored.certPem);
        return stored;
      }
      const pending = this.pending.get(uid);
      const ca =
        pending && pending.ca.certPem === published
          ? pending.ca
          : await createCertificateAuthority({
              commonName: `virtualcluster-client-ca-${uid}`,
              validityDays: CA_VALIDITY_DAYS,
            });
      const value = JSON.stringify({ uid, certPem: ca.certPem, keyPem: ca.keyPem } satisfies StoredAuthority);
      try {
        // A record of an earlier instance of the same name is replaced.
        if (record) await this.storage.update(key, value, record.revision);
        else await this.storage.create(key, value);
      } catch (error) {
        if (error instanceof StorageError && attempt < WRITE_ATTEMPTS) continue;
        throw error;
      }
      this.pending.delete(uid);
      if (ca.certPem !== published) await this.publish(instance, ca.certPem);
      return ca;
    }
  }

  private async publish(instance: VirtualClusterInstance, certPem: string): Promise<void> {
    const context = systemContext("system:instance-ca", MANAGER);
    this.own.add(context);
    const { namespace, name = "", uid } = instance.metadata;
    await this.instances().patch(
      context,
      { namespace, name, subresource: "status" },
      "merge",
      { metadata: { uid }, status: { clientCertificateAuthority: certPem } },
      { fieldManager: MANAGER },
    );
  }
}

function ignoreStorageRace(error: unknown): void {
  if (error instanceof StorageError || (isStatusError(error) && error.reason === "NotFound")) return;
  throw error;
}
