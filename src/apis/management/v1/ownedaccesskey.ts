// OwnedAccessKey: an access key of a user, team or subject, used as a bearer token. Cluster-scoped.
// The server keeps only a SHA-256 digest of the key (spec.key = "sha256:<hex>"); the plain key appears once, in the
// create response. Ownership: spec.user defaults to the caller; only admins (and the platform) create keys for
// others or set platform-managed fields. Who the key was issued to is pinned by uid in server-owned annotations.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import { formatTimestamp } from "../../../registry/time.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { deprecatedKeyWarnings } from "./deprecated-key-fields.ts";
import { type KeyLimits, keyExpiresAt } from "./ownedaccesskey-lifetime.ts";
import {
  canonicalizeScope,
  type OwnedAccessKey,
  type OwnedAccessKeySpec,
  ownedAccessKeySchema,
} from "./ownedaccesskey-schema.ts";
import {
  containsMaterial,
  DIGEST_PREFIX,
  keepStoredSecrets,
  presentAccessKey,
  SERVER_ANNOTATIONS,
  SESSION_GENERATION_ANNOTATION,
  scrubLastApplied,
  storedDigest,
  TEAM_UID_ANNOTATION,
  TOKEN_GENERATION_ANNOTATION,
  USER_UID_ANNOTATION,
} from "./ownedaccesskey-secrets.ts";

export type { OwnedAccessKey, OwnedAccessKeySpec } from "./ownedaccesskey-schema.ts";

/** Facts about key owners, as currently stored (implementations catch up with storage before answering). */
export interface AccessKeyOwners {
  user(name: string): Promise<{ uid: string; tokenGeneration: number; sessionGeneration: number } | undefined>;
  team(name: string): Promise<{ uid: string } | undefined>;
  /** Whether some stored key already has this digest (two keys must never share material). */
  digestInUse(digest: string): Promise<boolean>;
}

/** Who is calling, in access-key terms. */
export interface AccessKeyCaller {
  /** The user or team the caller acts as: what a new key belongs to by default. */
  owner(context: RequestContext): { user?: string; team?: string } | undefined;
  /** Admins and the platform itself manage every key and every field. */
  managesAll(context: RequestContext): boolean;
}

export interface OwnedAccessKeyOptions {
  owners: AccessKeyOwners;
  caller: AccessKeyCaller;
  material: { generate(): string; digest(key: string): string };
  /** The key lifetime limits in force, read at every use so the config can change them. */
  limits(): KeyLimits;
}

const MIN_KEY_LENGTH = 32;
const MAX_KEY_LENGTH = 512;
/** Printable ASCII without spaces: exactly what survives `Authorization: Bearer <key>`. */
const KEY_CHARACTERS = /^[\x21-\x7e]+$/;
const IMMUTABLE_FIELDS = ["user", "team", "subject", "type"] as const;
/** Fields only admins set: the platform fills them for SSO and logins. */
const MANAGED_FIELDS = ["groups", "identity", "oidcProvider", "oidcLogin", "parent"] as const;
const USER_KEY_TYPES = ["", "User"];

const KIND = { group: GROUP, kind: "OwnedAccessKey" };
const RESOURCE = { group: GROUP, resource: "ownedaccesskeys" };
/** Never echo a key in an error: its value is shown as this. */
const HIDDEN = '"<hidden>"';

/** Copies one field (typed by its own key, which a loop over several fields cannot be). */
const carry = <K extends keyof OwnedAccessKeySpec>(to: OwnedAccessKeySpec, from: OwnedAccessKeySpec, field: K) => {
  to[field] = from[field];
};

function invalid(key: OwnedAccessKey, errs: FieldError[]): never {
  throw errors.invalid(KIND, key.metadata.name ?? key.metadata.generateName ?? "", errs);
}

function ownedBy(key: OwnedAccessKey, owner: { user?: string; team?: string } | undefined): boolean {
  if (!owner) return false;
  if (owner.user) return key.spec?.user === owner.user;
  return owner.team !== undefined && key.spec?.team === owner.team;
}

const hasText = (value: unknown) => typeof value === "string" && value.trim() !== "";
const displayNameRequired = () =>
  fieldError.required("spec.displayName", "name the key for the people who will see it in lists and audit events");

function hasValue(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

export function createOwnedAccessKeyDefinition(options: OwnedAccessKeyOptions): ResourceDefinition {
  const { owners, caller, material } = options;
  /** status.expirationTimestamp: the end of the key's lifetime under the limits in force now (read-only). */
  const withExpiration = (key: OwnedAccessKey): OwnedAccessKey => {
    const { expirationTimestamp: _, ...status } = key.status ?? {};
    const createdMs = Date.parse(key.metadata.creationTimestamp ?? "");
    const end = Number.isNaN(createdMs)
      ? undefined
      : keyExpiresAt(
          {
            type: key.spec?.type ?? "",
            ttlSeconds: key.spec?.ttl ?? 0,
            ttlAfterLastActivity: key.spec?.ttlAfterLastActivity === true,
            createdMs,
            lastActivityMs: key.status?.lastActivity ? Date.parse(key.status.lastActivity) : undefined,
          },
          options.limits(),
        );
    if (end !== undefined)
      return { ...key, status: { ...status, expirationTimestamp: formatTimestamp(new Date(end)) } };
    return key.status?.expirationTimestamp === undefined ? key : { ...key, status };
  };
  /** The plain key of a create, by request: only that request's response may show it. */
  const revealed = new WeakMap<RequestContext, Map<string, string>>();

  const clampTTL = (key: OwnedAccessKey, context: RequestContext) => {
    const max = options.limits().accessKeyMaxTTLSeconds;
    const ttl = key.spec?.ttl;
    if (max > 0 && key.spec && typeof ttl === "number" && ttl > max) {
      key.spec.ttl = max;
      context.warnings.push(`spec.ttl was reduced to the platform's maximum access key lifetime of ${max} seconds`);
    }
  };

  /** Stamps who the key is issued to: uid annotations (a re-created user never inherits keys) and the GC owner. */
  const stampIssuer = async (key: OwnedAccessKey) => {
    const spec = key.spec!;
    const annotations = { ...(key.metadata.annotations ?? {}) };
    for (const name of SERVER_ANNOTATIONS) delete annotations[name];
    let owner: { kind: string; name: string; uid: string } | undefined;
    if (spec.user) {
      const user = await owners.user(spec.user);
      if (!user) invalid(key, [fieldError.notFound("spec.user", spec.user)]);
      annotations[USER_UID_ANNOTATION] = user.uid;
      annotations[TOKEN_GENERATION_ANNOTATION] = String(user.tokenGeneration);
      annotations[SESSION_GENERATION_ANNOTATION] = String(user.sessionGeneration);
      owner = { kind: "User", name: spec.user, uid: user.uid };
    } else if (spec.team) {
      const team = await owners.team(spec.team);
      if (!team) invalid(key, [fieldError.notFound("spec.team", spec.team)]);
      annotations[TEAM_UID_ANNOTATION] = team.uid;
      owner = { kind: "Team", name: spec.team, uid: team.uid };
    }
    key.metadata.annotations = annotations;
    if (owner && !key.metadata.ownerReferences?.some((ref) => ref.uid === owner.uid)) {
      key.metadata.ownerReferences = [
        ...(key.metadata.ownerReferences ?? []),
        { apiVersion: `${GROUP}/${VERSION}`, ...owner },
      ];
    }
  };

  const checkRestricted = (
    key: OwnedAccessKey,
    context: RequestContext,
    spec: OwnedAccessKeySpec,
    old?: OwnedAccessKeySpec,
  ) => {
    const changed = MANAGED_FIELDS.filter((field) =>
      old ? JSON.stringify(spec[field] ?? null) !== JSON.stringify(old[field] ?? null) : hasValue(spec[field]),
    );
    if (!old && !USER_KEY_TYPES.includes(spec.type ?? "")) changed.push("type" as never);
    if (changed.length === 0) return;
    throw errors.forbidden(
      RESOURCE,
      key.metadata.name ?? "",
      `User "${context.user.name}" cannot set ${changed.map((f) => `spec.${f}`).join(", ")}: only admins manage them`,
    );
  };

  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "OwnedAccessKey",
    plural: "ownedaccesskeys",
    singular: "ownedaccesskey",
    shortNames: ["accesskey", "accesskeys"],
    categories: [CATEGORY],
    namespaced: false,
    description:
      "OwnedAccessKey is an access key of a user or team, used as a bearer token for the platform API and CLI.",
    schema: ownedAccessKeySchema,
    statusSubresource: true,
    authorization: {
      // Every user or team caller manages its own keys (the store shows each caller only its own).
      ownerRights: { holder: "user-or-team", verbs: "*" },
      credentials: [{ verbs: ["create", "update", "patch"], boundedBy: false }],
    },
    strategy: {
      canonicalize(key) {
        canonicalizeScope(key.spec?.scope);
        // Computed on every read (withExpiration), never stored.
        if (key.status) delete key.status.expirationTimestamp;
      },

      async prepareForCreate(key, context) {
        key.spec ??= {};
        const spec = key.spec;
        const all = caller.managesAll(context);
        const me = caller.owner(context);
        if (!spec.user && !spec.team && !spec.subject) {
          if (me?.user) spec.user = me.user;
          else if (me?.team) spec.team = me.team;
        }
        const named = [spec.user, spec.team, spec.subject].filter(Boolean).length;
        if (named === 0) invalid(key, [fieldError.required("spec.user", "one of user, team or subject is required")]);
        if (named > 1)
          invalid(key, [fieldError.forbidden("spec.team", "only one of user, team or subject may be set")]);
        if (!all) {
          if (!ownedBy(key, me)) {
            throw errors.forbidden(
              RESOURCE,
              key.metadata.name ?? "",
              `User "${context.user.name}" cannot create access keys for another user, team or subject`,
            );
          }
          checkRestricted(key, context, spec);
        }
        if (!hasText(spec.displayName)) invalid(key, [displayNameRequired()]);
        spec.type ||= "User";
        await stampIssuer(key);
        clampTTL(key, context);

        scrubLastApplied(key);
        const plain = spec.key || material.generate();
        if (spec.key) {
          const detail = `must be ${MIN_KEY_LENGTH} to ${MAX_KEY_LENGTH} printable characters without spaces`;
          if (plain.length < MIN_KEY_LENGTH || plain.length > MAX_KEY_LENGTH || !KEY_CHARACTERS.test(plain)) {
            invalid(key, [{ type: "FieldValueInvalid", field: "spec.key", badValueText: HIDDEN, detail }]);
          }
        }
        const digest = material.digest(plain);
        if (containsMaterial(key, [plain, digest])) {
          invalid(key, [fieldError.forbidden("spec", "the access key may appear only in spec.key")]);
        }
        if (await owners.digestInUse(digest)) {
          invalid(key, [
            { type: "FieldValueInvalid", field: "spec.key", badValueText: HIDDEN, detail: "choose another key" },
          ]);
        }
        spec.key = `${DIGEST_PREFIX}${digest}`;
        let pending = revealed.get(context);
        if (!pending) {
          pending = new Map();
          revealed.set(context, pending);
        }
        pending.set(digest, plain);
      },

      async prepareForUpdate(key, old, context) {
        const all = caller.managesAll(context);
        // Re-checked against the stored object (the compare-and-swap base), so no race hands over another's key.
        if (!all && !ownedBy(old, caller.owner(context))) throw errors.notFound(RESOURCE, old.metadata.name ?? "");
        key.spec ??= {};
        const spec = key.spec;
        const oldSpec = old.spec ?? {};
        const errs: FieldError[] = [];
        for (const field of IMMUTABLE_FIELDS) {
          if (spec[field] === undefined || spec[field] === "") {
            if (oldSpec[field] === undefined) delete spec[field];
            else carry(spec, oldSpec, field);
          } else if (spec[field] !== oldSpec[field])
            errs.push(fieldError.forbidden(`spec.${field}`, "field is immutable"));
        }
        // Keys stored before a display name was required keep working; a name, once given, cannot be emptied.
        if (hasText(oldSpec.displayName) && !hasText(spec.displayName)) errs.push(displayNameRequired());
        const oldDigest = storedDigest(old);
        const sent = spec.key;
        if (!sent || sent === oldSpec.key || (oldDigest && material.digest(sent) === oldDigest)) {
          if (oldSpec.key === undefined) delete spec.key;
          else spec.key = oldSpec.key;
        } else {
          errs.push(fieldError.forbidden("spec.key", "the key cannot be changed; create a new access key"));
        }
        if (errs.length) invalid(key, errs);
        if (!all) checkRestricted(key, context, spec, oldSpec);
        keepStoredSecrets(spec, oldSpec);
        // Server-owned annotations always come from the stored object.
        const annotations = { ...(key.metadata.annotations ?? {}) };
        for (const name of SERVER_ANNOTATIONS) {
          const value = old.metadata.annotations?.[name];
          if (value === undefined) delete annotations[name];
          else annotations[name] = value;
        }
        key.metadata.annotations = annotations;
        if (Object.keys(annotations).length === 0) delete key.metadata.annotations;
        // A ttl asked for now is clamped; a stored one stays (authentication enforces the current maximum anyway).
        if (spec.ttl !== oldSpec.ttl) clampTTL(key, context);
        scrubLastApplied(key);
        const needles = oldDigest ? [oldDigest] : [];
        if (sent && !sent.startsWith(DIGEST_PREFIX)) needles.push(sent);
        if (containsMaterial(key, needles)) {
          invalid(key, [fieldError.forbidden("spec", "the access key may appear only in spec.key")]);
        }
      },

      beforeDelete(key, context) {
        if (!caller.managesAll(context) && !ownedBy(key, caller.owner(context))) {
          throw errors.notFound(RESOURCE, key.metadata.name ?? "");
        }
      },

      validate(key, context) {
        context.warnings.push(...deprecatedKeyWarnings(key.spec));
        return [];
      },

      presentForRead(key, context) {
        const digest = storedDigest(key);
        return withExpiration(presentAccessKey(key, digest ? revealed.get(context)?.get(digest) : undefined));
      },
    },
    columns: [
      {
        name: "Owner",
        type: "string",
        description: "User, team or subject the key belongs to.",
        cell: (k) => k.spec?.user ?? (k.spec?.team ? `team:${k.spec.team}` : k.spec?.subject),
      },
      { name: "Type", type: "string", description: "Key type.", cell: (k) => k.spec?.type },
      {
        name: "Disabled",
        type: "boolean",
        description: "Whether the key is switched off.",
        cell: (k) => k.spec?.disabled === true,
      },
      {
        name: "TTL",
        type: "integer",
        description: "Time to live in seconds (0: none).",
        cell: (k) => k.spec?.ttl ?? 0,
      },
      {
        name: "Last Activity",
        type: "string",
        format: "date-time",
        description: "Last time the key was used (recorded at most once a minute).",
        cell: (k) => k.status?.lastActivity ?? "<none>",
      },
      {
        name: "Display Name",
        type: "string",
        priority: 1,
        description: "Name shown in the UI.",
        cell: (k) => k.spec?.displayName,
      },
    ],
    selectableFields: {
      "spec.user": (k) => k.spec?.user,
      "spec.team": (k) => k.spec?.team,
      "spec.type": (k) => k.spec?.type,
      "spec.disabled": (k) => String(k.spec?.disabled === true),
    },
  });
}
