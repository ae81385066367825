// A detail page's pieces: its facts as a description list, one object read by GET, and what to say when it cannot be
// read (missing or hidden alike: "no project here", never "forbidden").

import {
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
} from "@patternfly/react-core";
import { type ReactNode, useEffect, useState } from "react";
import { ApiError, api } from "../lib/api.ts";
import { Empty, ErrorAlert } from "./common.tsx";

export function Details({ items }: { items: [string, ReactNode][] }) {
  return (
    <DescriptionList isHorizontal isCompact className="vcp-detail-section">
      {items.map(([term, value]) => (
        <DescriptionListGroup key={term}>
          <DescriptionListTerm>{term}</DescriptionListTerm>
          <DescriptionListDescription>{value || "—"}</DescriptionListDescription>
        </DescriptionListGroup>
      ))}
    </DescriptionList>
  );
}

/** GET of one object, with its failure; `path` undefined: nothing. */
export function useObject<T>(path: string | undefined): { object?: T; error?: unknown } {
  const [state, setState] = useState<{ object?: T; error?: unknown }>({});
  useEffect(() => {
    if (!path) return;
    setState({});
    api.get<T>(path).then(
      (object) => setState({ object }),
      (error) => setState({ error }),
    );
  }, [path]);
  return state;
}

export function NotReadable({ what, error }: { what: string; error: unknown }) {
  const missingOrHidden = error instanceof ApiError && (error.code === 404 || error.code === 403);
  return missingOrHidden ? (
    <Empty title={`No ${what} here`} body={`It does not exist, or you may not see it.`} />
  ) : (
    <ErrorAlert error={error} title={`The ${what} cannot be read`} />
  );
}
