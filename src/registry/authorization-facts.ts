// What a resource declares about authorization, read by the identity layer of the server that serves it (the
// platform's rights, its scoped keys and its tokens), so that no authorizer or authenticator keeps a per-kind list.
// The registry itself never reads these facts: they travel with the definition.

/** Whose objects of this kind count as the caller's own. */
export type OwnerHolder =
  /** The object named like the calling user (its own User). */
  | "self"
  /** A team the calling user belongs to. */
  | "member"
  /** Every user or team caller (not a bare subject); the store shows each caller only its own objects. */
  | "user-or-team"
  /** Every authenticated caller. */
  | "anyone";

export interface OwnerRights {
  holder: OwnerHolder;
  /** Verbs on the main resource; "*" for all. */
  verbs: readonly string[] | "*";
  /** Verbs on subresources, by subresource name. */
  subresources?: Readonly<Record<string, readonly string[]>>;
}

/**
 * A request that hands out a credential (an access key, a password, a token, a kubeconfig). A caller holding a token
 * never makes one: a token cannot outlive itself. A caller holding a scoped key makes one only when the credential
 * stays within that scope: "scope" (the issuer checks the new credential's scope against the caller's), "instance"
 * (the credential reaches one object, which the caller's scope must cover whole), or false (nothing bounds it).
 */
export interface CredentialFact {
  /** Verbs that mint; "*" for all. */
  verbs: readonly string[] | "*";
  /** The subresource that mints; absent: the main resource. */
  subresource?: string;
  boundedBy: "scope" | "instance" | false;
}

export interface AuthorizationFacts {
  /** Rights a caller holds on its own objects of this kind, before its key's scope narrows them. */
  ownerRights?: OwnerRights;
  /** Subresource verbs granted to whoever may `get` the object, by subresource name. */
  readerRights?: Readonly<Record<string, readonly string[]>>;
  /** Requests that mint a credential. */
  credentials?: readonly CredentialFact[];
  /** Verbs an access rule's verb brings along: `{use: ["get"]}` lets whoever may use a cluster see it. */
  impliedVerbs?: Readonly<Record<string, readonly string[]>>;
  /**
   * Every field through which an object gives subjects rights: members, owners, access rules, roles. Changing one
   * needs more than `update` (`bind`, `makeowner` or `escalate`); the server's grant checks read this list, so a
   * field declared here is checked, and one table test exercises every declared field.
   */
  grants?: readonly GrantingField[];
}

export type SubjectKind = "User" | "Team";

/** One subject a granting field names. */
export interface GrantedSubject {
  kind: SubjectKind;
  /** The subject's object name; "*" for every user (bind on the whole collection). */
  name: string;
  /** What it is granted (a role, a rule's verbs): the same subject with a new grant counts as newly granted. */
  grant: string;
  /** Field path of the entry, for error messages (`spec.members[2].name`). */
  path: string;
}

export interface GrantingField {
  /** Dotted path from the object's root, e.g. `spec.members`. */
  path: string;
  /** Any change of the field on update needs `escalate` on the object itself (only admins hold it). */
  escalate?: boolean;
  /** The field names subjects: each newly granted one needs `verb` on it and must exist. */
  subjects?: {
    verb: "bind" | "makeowner";
    kinds: readonly SubjectKind[];
    /** The subjects a value names. Runs before validation: must accept any value, ignoring what it cannot read. */
    of(value: unknown, path: string): GrantedSubject[];
  };
  /** A value of the field that grants `subject` something: lets one test exercise every granting field. */
  example(subject: { kind: SubjectKind; name: string }): unknown;
}

const matches = (verbs: readonly string[] | "*", verb: string) => verbs === "*" || verbs.includes(verb);

/** The credential a request would mint, if any. */
export function credentialMinted(
  facts: AuthorizationFacts | undefined,
  verb: string,
  subresource: string | undefined,
): CredentialFact | undefined {
  return facts?.credentials?.find((fact) => fact.subresource === subresource && matches(fact.verbs, verb));
}

/** Whether `verb` on `subresource` (absent: the main resource) is among the owner's rights. */
export function ownerMay(rights: OwnerRights, verb: string, subresource: string | undefined): boolean {
  if (subresource === undefined) return matches(rights.verbs, verb);
  return rights.subresources?.[subresource]?.includes(verb) ?? false;
}
