// Conjunction of predicates built once, so a compiled selector does not walk an array per object when it
// has zero, one or two terms (the usual cases).

/** A predicate true when every one of `predicates` is (true for none at all). */
export function allOf<T>(predicates: readonly ((value: T) => boolean)[]): (value: T) => boolean {
  switch (predicates.length) {
    case 0:
      return () => true;
    case 1:
      return predicates[0];
    case 2: {
      const [first, second] = predicates;
      return (value) => first(value) && second(value);
    }
    default: {
      const all = [...predicates];
      return (value) => {
        for (const predicate of all) if (!predicate(value)) return false;
        return true;
      };
    }
  }
}
