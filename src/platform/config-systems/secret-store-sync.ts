// The secret store on the leader (Config secretStore.enabled): every ProjectSecret of every project is kept in the
// store's KV version 2 engine at <mount>/data/<pathPrefix>/projects/<project>/<name>, written when it changes on the
// platform (the watch brings it at once) and read back every syncInterval, so a value changed in the store reaches
// the platform. src/secretstore/sync-plan.ts decides each sync (the store wins a conflict). Each secret's Synced
// condition and the Config's SecretStoreReady condition say how the last sync went; messages name the secret, the
// store path and the store's reason, never a value or the token.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { projectOfNamespace } from "../../apis/management/v1/project.ts";
import type { Condition } from "../../apis/management/v1/project-schema.ts";
import { PLATFORM_NAMESPACE, type ProjectSecret } from "../../apis/management/v1/projectsecret.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { SecretStoreSettings } from "../../config/system-settings.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { ResourceStore, WatchHandle } from "../../registry/types.ts";
import { planSync } from "../../secretstore/sync-plan.ts";
import { kvPath, VaultError, VaultKvClient } from "../../secretstore/vault-kv.ts";
import type { BackgroundTask as LeaderTask } from "./background-task.ts";
import type { ConfigStatusWriter } from "./config-status.ts";

const AGENT = "secret-store-sync";
const CONDITION = "SecretStoreReady";
const context = () => systemContext("system:secret-store", AGENT);

export interface SecretStoreSyncOptions {
  registry: Registry;
  settings: LiveSettings;
  status: ConfigStatusWriter;
  logger?: Logger;
}

interface SyncFailure {
  reason: string;
  message: string;
}

/** The store's values are text; a value that is not UTF-8 cannot be kept there. */
function toText(data: Record<string, string> | undefined): Record<string, string> | { notText: string } {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    const bytes = Buffer.from(value, "base64");
    const text = bytes.toString("utf8");
    if (!Buffer.from(text, "utf8").equals(bytes)) return { notText: key };
    out[key] = text;
  }
  return out;
}

const toBase64 = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, "utf8").toString("base64")]));

export class SecretStoreSync {
  private readonly options: SecretStoreSyncOptions;
  private running?: { settings: SecretStoreSettings; timer: NodeJS.Timeout; watch?: WatchHandle };
  private readonly pending = new Set<string>();
  private worker?: Promise<void>;
  private unsubscribe?: () => void;
  /** The first failure of the current round, for the Config's condition. */
  private roundFailure?: SyncFailure;

  constructor(options: SecretStoreSyncOptions) {
    this.options = options;
  }

  leaderTask(): LeaderTask {
    return {
      name: "secret store sync",
      start: () => {
        this.configure(this.options.settings.current().secretStore);
        this.unsubscribe = this.options.settings.onChange((next, previous) => {
          if (JSON.stringify(next.secretStore) !== JSON.stringify(previous.secretStore)) {
            this.configure(next.secretStore);
          }
        });
      },
      stop: () => {
        this.unsubscribe?.();
        this.stopRunning();
      },
    };
  }

  /** Resolves when the syncs queued so far are done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.worker) await this.worker;
  }

  private secrets(): ResourceStore {
    const store = this.options.registry.store(GROUP, "projectsecrets");
    if (!store) throw new Error("projectsecrets is not registered");
    return store;
  }

  private configure(settings: SecretStoreSettings): void {
    this.stopRunning();
    if (!settings.enabled) {
      void this.options.status.setCondition(CONDITION, undefined);
      return;
    }
    const timer = setInterval(() => void this.round(), settings.syncIntervalMs);
    timer.unref();
    this.running = { settings, timer };
    void this.watch(settings);
    void this.round();
  }

  private stopRunning(): void {
    if (!this.running) return;
    clearInterval(this.running.timer);
    this.running.watch?.close();
    this.running = undefined;
    this.pending.clear();
  }

  /** Platform changes (a new generation) and deletions are synced at once. */
  private async watch(settings: SecretStoreSettings): Promise<void> {
    try {
      const handle = await this.secrets().watch(
        context(),
        {},
        {
          send: (event) => {
            const secret = event.object as ProjectSecret;
            if (!secret.metadata?.name || secret.metadata.namespace === PLATFORM_NAMESPACE) return true;
            if (event.type === "DELETED") void this.forget(settings, secret);
            else if (secret.metadata.generation !== secret.status?.store?.observedGeneration) this.enqueue(secret);
            return true;
          },
          end: () => {
            // The next round still syncs everything; the watch comes back with the next configuration.
          },
        },
      );
      if (this.running?.settings === settings) this.running.watch = handle;
      else handle.close();
    } catch (error) {
      this.options.logger?.warn({ err: String(error) }, "watching project secrets failed");
    }
  }

  private async round(): Promise<void> {
    if (!this.running) return;
    this.roundFailure = undefined;
    try {
      const list = await this.secrets().list(context(), {});
      for (const item of list.items as ProjectSecret[]) {
        if (item.metadata.namespace !== PLATFORM_NAMESPACE) this.enqueue(item);
      }
      await this.idle();
      if (!this.running) return;
      const failure = this.roundFailure as SyncFailure | undefined;
      await this.options.status.setCondition(
        CONDITION,
        failure
          ? { type: CONDITION, status: "False", reason: failure.reason, message: failure.message }
          : {
              type: CONDITION,
              status: "True",
              reason: "Synced",
              message: `${list.items.length} project secrets in sync with ${new URL(this.running.settings.address).origin}`,
            },
      );
    } catch (error) {
      this.options.logger?.warn({ err: String(error) }, "secret store round failed");
    }
  }

  private enqueue(secret: KubeObject): void {
    this.pending.add(`${secret.metadata.namespace}/${secret.metadata.name}`);
    this.worker ??= this.work().finally(() => {
      this.worker = undefined;
    });
  }

  private async work(): Promise<void> {
    while (this.pending.size > 0 && this.running) {
      const [key] = this.pending;
      this.pending.delete(key);
      const [namespace, name] = key.split("/");
      try {
        await this.syncOne(this.running.settings, namespace, name);
      } catch (error) {
        this.options.logger?.warn({ namespace, name, err: String(error) }, "syncing a project secret failed");
      }
    }
  }

  private storePath(settings: SecretStoreSettings, secret: KubeObject): string | undefined {
    const project = projectOfNamespace(
      this.options.settings.current().projectNamespacePrefix,
      secret.metadata.namespace,
    );
    return project && kvPath(settings.pathPrefix, "projects", project, secret.metadata.name ?? "");
  }

  private async syncOne(settings: SecretStoreSettings, namespace: string, name: string): Promise<void> {
    let secret: ProjectSecret;
    try {
      secret = (await this.secrets().get(context(), { namespace, name })) as ProjectSecret;
    } catch (error) {
      if (isStatusError(error) && error.code === 404) return;
      throw error;
    }
    const path = this.storePath(settings, secret);
    if (!path) return;
    const failed = (failure: SyncFailure) => {
      this.roundFailure ??= { reason: failure.reason, message: `${namespace}/${name}: ${failure.message}` };
      return this.setSynced(secret, { status: "False", ...failure });
    };
    const client = await this.client(settings);
    if ("reason" in client) return failed(client);
    const text = toText(secret.spec?.data);
    if ("notText" in text) {
      return failed({
        reason: "NotText",
        message: `the value of "${text.notText}" is not UTF-8 text; the store keeps text`,
      });
    }
    try {
      const stored = await client.read(path);
      const store = secret.status?.store;
      const plan = planSync(
        {
          generation: secret.metadata.generation ?? 1,
          observedGeneration: store?.observedGeneration,
          agreedVersion: store?.version,
          data: text,
        },
        stored,
      );
      if (plan.action === "none") {
        // A True condition keeps saying how the last change went (Written, Read, StoreWon).
        if (secret.status?.conditions?.some((c) => c.type === "Synced" && c.status === "True")) return;
        return this.setSynced(secret, synced("Synced", "in sync"), client.dataPath(path));
      }
      if (plan.action === "push") {
        const version = await client.write(path, text, plan.cas);
        return this.setSynced(
          secret,
          synced("Written", `version ${version} written to the store`),
          client.dataPath(path),
          {
            version,
            observedGeneration: secret.metadata.generation ?? 1,
          },
        );
      }
      let generation = secret.metadata.generation ?? 1;
      if (plan.changed) {
        const updated = await this.secrets().update(
          context(),
          { namespace, name },
          { ...secret, spec: { ...secret.spec, data: toBase64(plan.data) } },
          { fieldManager: AGENT },
        );
        secret = updated as ProjectSecret;
        generation = secret.metadata.generation ?? generation;
      }
      const condition = plan.overwrote
        ? synced("StoreWon", `the store's version ${plan.version} replaced a change made on the platform`)
        : synced("Read", `version ${plan.version} read from the store`);
      return this.setSynced(secret, condition, client.dataPath(path), {
        version: plan.version,
        observedGeneration: generation,
      });
    } catch (error) {
      if (error instanceof VaultError) {
        if (error.reason === "CheckAndSetFailed") this.pending.add(`${namespace}/${name}`);
        return failed({ reason: error.reason, message: error.message });
      }
      if (isStatusError(error) && error.code === 409) {
        this.pending.add(`${namespace}/${name}`); // changed meanwhile: sync the new generation
        return;
      }
      throw error;
    }
  }

  /** Deleting a ProjectSecret deletes its versions in the store. */
  private async forget(settings: SecretStoreSettings, secret: ProjectSecret): Promise<void> {
    const path = this.storePath(settings, secret);
    const client = await this.client(settings);
    if (!path || "reason" in client || secret.status?.store?.version === undefined) return;
    try {
      await client.destroy(path);
    } catch (error) {
      this.options.logger?.warn(
        { namespace: secret.metadata.namespace, name: secret.metadata.name, reason: (error as VaultError).reason },
        "deleting a project secret from the secret store failed",
      );
    }
  }

  /** The client for the configured store, or why there is none. */
  private async client(settings: SecretStoreSettings): Promise<VaultKvClient | SyncFailure> {
    if (!settings.address) {
      return { reason: "NoAddress", message: "secretStore.address is empty and VAULT_ADDR was not set" };
    }
    const token = settings.token || (await this.referencedToken(settings));
    if (typeof token !== "string") return token;
    return new VaultKvClient({
      address: settings.address,
      token,
      namespace: settings.namespace,
      mount: settings.mount,
      skipTLSVerify: settings.skipTLSVerify,
    });
  }

  /** The token in the ProjectSecret of the platform's namespace that tokenSecretRef names. */
  private async referencedToken(settings: SecretStoreSettings): Promise<string | SyncFailure> {
    const ref = settings.tokenSecretRef;
    if (!ref?.name) return { reason: "NoToken", message: "secretStore.auth has neither token nor tokenSecretRef" };
    const where = `the project secret ${PLATFORM_NAMESPACE}/${ref.name}`;
    let secret: ProjectSecret | undefined;
    try {
      secret = (await this.secrets().get(context(), {
        namespace: PLATFORM_NAMESPACE,
        name: ref.name,
      })) as ProjectSecret;
    } catch (error) {
      if (!isStatusError(error) || error.code !== 404) throw error;
    }
    const value = secret?.spec?.data?.[ref.key];
    if (value === undefined) {
      const missing = secret ? `${where} has no key "${ref.key}"` : `${where} does not exist`;
      return { reason: ref.optional ? "NoToken" : "TokenSecretMissing", message: `tokenSecretRef: ${missing}` };
    }
    return Buffer.from(value, "base64").toString("utf8").trim();
  }

  private async setSynced(
    secret: ProjectSecret,
    condition: Omit<Condition, "type" | "lastTransitionTime">,
    path?: string,
    agreed?: { version: number; observedGeneration: number },
  ): Promise<void> {
    const status = structuredClone(secret.status ?? {});
    const conditions = (status.conditions ?? []).filter((c) => c.type !== "Synced");
    const old = status.conditions?.find((c) => c.type === "Synced");
    const next: Condition = {
      type: "Synced",
      ...condition,
      lastTransitionTime:
        old?.status === condition.status && old.lastTransitionTime ? old.lastTransitionTime : new Date().toISOString(),
    };
    status.conditions = [...conditions, next];
    if (path || agreed) {
      status.store = {
        ...status.store,
        ...(path ? { path } : {}),
        ...(agreed ? { ...agreed, syncedTime: new Date().toISOString() } : {}),
      };
    }
    // The same condition again writes nothing (a round every interval must not churn the store).
    const same =
      JSON.stringify({ ...old, lastTransitionTime: undefined }) ===
        JSON.stringify({ ...next, lastTransitionTime: undefined }) && !agreed;
    if (same && JSON.stringify(status.store?.path) === JSON.stringify(secret.status?.store?.path)) return;
    try {
      await this.secrets().update(
        context(),
        { namespace: secret.metadata.namespace, name: secret.metadata.name ?? "", subresource: "status" },
        { ...secret, status },
        { fieldManager: AGENT },
      );
    } catch (error) {
      if (isStatusError(error) && (error.code === 409 || error.code === 404)) {
        if (error.code === 409) this.pending.add(`${secret.metadata.namespace}/${secret.metadata.name}`);
        return;
      }
      throw error;
    }
  }
}

const synced = (reason: string, message: string) => ({ status: "True" as const, reason, message });
