// Small pieces every page uses: relative dates with the exact time on hover, API errors as alerts, empty and loading
// states, and a list toolbar with search and paging.

import {
  Alert,
  Bullseye,
  EmptyState,
  EmptyStateActions,
  EmptyStateBody,
  EmptyStateFooter,
  Pagination,
  SearchInput,
  Spinner,
  Toolbar,
  ToolbarContent,
  ToolbarItem,
  Tooltip,
} from "@patternfly/react-core";
import { type ReactNode, useEffect, useMemo, useState } from "react";
import { errorMessage } from "../lib/api.ts";
import { exactTime, relativeTime } from "../lib/time.ts";

/** `value` is an RFC 3339 time; null where Kubernetes sends one (an unset creationTimestamp). */
export function TimeAgo({ value, empty = "Never" }: { value?: string | null; empty?: string }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(timer);
  }, []);
  if (!value) return <span>{empty}</span>;
  return (
    <Tooltip content={exactTime(value)}>
      <time dateTime={value} title={exactTime(value)}>
        {relativeTime(value)}
      </time>
    </Tooltip>
  );
}

export function ErrorAlert({ error, title = "The request failed" }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert variant="danger" isInline title={title} role="alert">
      {errorMessage(error)}
    </Alert>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <Bullseye>
      <Spinner aria-label={`Loading ${what}`} />
    </Bullseye>
  );
}

export function Empty({ title, body, action }: { title: string; body: ReactNode; action?: ReactNode }) {
  return (
    <EmptyState titleText={title} headingLevel="h2" variant="sm">
      <EmptyStateBody>{body}</EmptyStateBody>
      {action && (
        <EmptyStateFooter>
          <EmptyStateActions>{action}</EmptyStateActions>
        </EmptyStateFooter>
      )}
    </EmptyState>
  );
}

/** Client-side search and paging over a live list. */
export function usePaged<T>(items: T[], text: (item: T) => string) {
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(1);
  const [perPage, setPerPage] = useState(20);
  const filtered = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return needle ? items.filter((item) => text(item).toLowerCase().includes(needle)) : items;
  }, [items, search, text]);
  const pages = Math.max(1, Math.ceil(filtered.length / perPage));
  const current = Math.min(page, pages);
  const visible = filtered.slice((current - 1) * perPage, current * perPage);
  return { search, setSearch, page: current, setPage, perPage, setPerPage, filtered, visible };
}

export function ListToolbar({
  label,
  paged,
  actions,
}: {
  label: string;
  paged: ReturnType<typeof usePaged<never>> | ReturnType<typeof usePaged<unknown>>;
  actions?: ReactNode;
}) {
  return (
    <Toolbar>
      <ToolbarContent>
        <ToolbarItem>
          <SearchInput
            aria-label={`Search ${label}`}
            placeholder={`Search ${label}`}
            value={paged.search}
            onChange={(_event, value) => {
              paged.setSearch(value);
              paged.setPage(1);
            }}
            onClear={() => paged.setSearch("")}
          />
        </ToolbarItem>
        {actions && <ToolbarItem>{actions}</ToolbarItem>}
        <ToolbarItem variant="pagination" align={{ default: "alignEnd" }}>
          <Pagination
            itemCount={paged.filtered.length}
            perPage={paged.perPage}
            page={paged.page}
            onSetPage={(_event, page) => paged.setPage(page)}
            onPerPageSelect={(_event, perPage) => {
              paged.setPerPage(perPage);
              paged.setPage(1);
            }}
            isCompact
            titles={{ paginationAriaLabel: `${label} pages` }}
          />
        </ToolbarItem>
      </ToolbarContent>
    </Toolbar>
  );
}

/** Row actions (Lock, Disable, ...): runs one, keeping the API's refusal to show above the list. */
export function useRowAction() {
  const [error, setError] = useState<unknown>();
  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    }
  };
  return { error, run };
}
