// The list every page shows: loading, an empty state that says what to do, or a compact table whose rows end in a
// kebab of actions named after the row ("Actions for alice"); and the dialog every form uses, which shows the API's
// refusal in place and stays open until the request succeeds.

import { Button, Form, Modal, ModalBody, ModalFooter, ModalHeader } from "@patternfly/react-core";
import { ActionsColumn, type IAction, Table, Tbody, Td, Th, Thead, Tr } from "@patternfly/react-table";
import { type FormEvent, type ReactNode, useRef, useState } from "react";
import { ApiError } from "../lib/api.ts";
import type { WatchedList } from "../lib/use-watch-list.ts";
import { Empty, ErrorAlert, Loading } from "./common.tsx";
import { type FieldErrors, FieldErrorsContext } from "./form.tsx";

export interface Column<T> {
  title: string;
  cell: (item: T) => ReactNode;
}

export interface ResourceListProps<T> {
  /** Accessible name of the table, and the noun of the loading state. */
  label: string;
  list: WatchedList<T>;
  /** The rows of the current page (after search and paging). */
  rows: T[];
  /** Whether a search hides every row (the empty state then says so). */
  searching: boolean;
  empty: { title: string; body: ReactNode; action?: ReactNode };
  columns: Column<T>[];
  rowName: (item: T) => string;
  /** Row actions the caller may take (a row without any has no menu; a list without any, no column). */
  actions?: (item: T) => IAction[];
}

/** Drops separators at either end or doubled (what is left after the actions the caller may not take). */
function tidy(actions: IAction[]): IAction[] {
  const kept = actions.filter((action, i) => !action.isSeparator || (i > 0 && !actions[i - 1].isSeparator));
  while (kept[0]?.isSeparator) kept.shift();
  while (kept.at(-1)?.isSeparator) kept.pop();
  return kept;
}

export function ResourceList<T>(props: ResourceListProps<T>) {
  const { label, list, rows, columns, rowName } = props;
  const rowActions = new Map(rows.map((item) => [item, tidy(props.actions?.(item) ?? [])]));
  const actions = [...rowActions.values()].some((a) => a.length > 0)
    ? (item: T) => rowActions.get(item) ?? []
    : undefined;
  if (list.loading) return <Loading what={label.toLowerCase()} />;
  if (rows.length === 0) {
    return props.searching ? (
      <Empty title={`No ${label.toLowerCase()} match`} body="Clear the search to see them all." />
    ) : (
      <Empty title={props.empty.title} body={props.empty.body} action={props.empty.action} />
    );
  }
  return (
    <Table aria-label={label} variant="compact">
      <Thead>
        <Tr>
          {columns.map((column) => (
            <Th key={column.title} modifier="wrap">
              {column.title}
            </Th>
          ))}
          {actions && <Th screenReaderText="Actions" />}
        </Tr>
      </Thead>
      <Tbody>
        {rows.map((item) => {
          const name = rowName(item);
          return (
            <Tr key={name}>
              {columns.map((column) => (
                <Td key={column.title} dataLabel={column.title}>
                  {column.cell(item)}
                </Td>
              ))}
              {actions && actions(item).length === 0 && <Td />}
              {actions && actions(item).length > 0 && (
                <Td isActionCell>
                  <ActionsColumn
                    popperProps={{ position: "right" }}
                    actionsToggle={({ onToggle, isOpen, toggleRef }) => (
                      <Button
                        ref={toggleRef}
                        variant="plain"
                        onClick={onToggle}
                        aria-expanded={isOpen}
                        aria-label={`Actions for ${name}`}
                      >
                        ⋮
                      </Button>
                    )}
                    items={actions(item)}
                  />
                </Td>
              )}
            </Tr>
          );
        })}
      </Tbody>
    </Table>
  );
}

export interface FormModalProps {
  title: string;
  /** The form's id (the submit button sits in the footer, outside the form). */
  id: string;
  submitLabel: string;
  /** Throws to show the API's refusal; resolves false to stay open (a result to show). */
  onSubmit: () => Promise<boolean | undefined>;
  onClose: () => void;
  /** Title of the refusal alert, e.g. "The user was not created". */
  failure: string;
  /** Checks before anything is sent: messages by input id (see missing()); any message stops the submit. */
  validate?: () => FieldErrors;
  /** The input that shows an API cause about `field` ("spec.displayName", "metadata.name" for a name taken). */
  fieldOf?: (field: string) => string | undefined;
  /** Refusals that concern a field without naming it as a cause (a wrong current password): messages by input. */
  explain?: (failure: ApiError) => FieldErrors | undefined;
  variant?: "small" | "medium";
  /** A destructive action: a red button and a warning icon. */
  danger?: boolean;
  children: ReactNode;
}

/** The API's refusal as messages at the inputs it names. */
function apiFieldErrors(failure: unknown, fieldOf: FormModalProps["fieldOf"], explain: FormModalProps["explain"]) {
  if (!(failure instanceof ApiError)) return {};
  const explained = explain?.(failure);
  if (explained) return explained;
  if (!fieldOf) return {};
  const errors: FieldErrors = {};
  for (const cause of failure.status.details?.causes ?? []) {
    const id = cause.field ? fieldOf(cause.field) : undefined;
    if (id && !errors[id]) errors[id] = cause.message ?? "Invalid value.";
  }
  const named = fieldOf("metadata.name");
  if (failure.code === 409 && named) errors[named] = failure.status.message ?? "The name is taken.";
  return errors;
}

export function FormModal(props: FormModalProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const alertRef = useRef<HTMLDivElement>(null);
  const showErrors = (errors: FieldErrors) => {
    setFieldErrors(errors);
    const first = Object.keys(errors)[0];
    // After the render that marks the field: focus moves to the first field in error, or to the alert on top.
    requestAnimationFrame(() => {
      const target = first ? document.getElementById(first) : alertRef.current;
      target?.focus();
      target?.scrollIntoView({ block: "center" });
    });
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const invalid = props.validate?.() ?? {};
    if (Object.keys(invalid).length > 0) {
      showErrors(invalid);
      return;
    }
    setBusy(true);
    setFieldErrors({});
    try {
      const close = await props.onSubmit();
      setBusy(false);
      if (close !== false) props.onClose();
    } catch (failure) {
      const atFields = apiFieldErrors(failure, props.fieldOf, props.explain);
      // A refusal told at its fields needs no second telling on top.
      setError(Object.keys(atFields).length > 0 ? new Error("See the fields marked below.") : failure);
      setBusy(false);
      showErrors(atFields);
    }
  };
  const titleId = `${props.id}-title`;
  return (
    <Modal isOpen onClose={props.onClose} variant={props.variant ?? "medium"} aria-labelledby={titleId}>
      <ModalHeader title={props.title} labelId={titleId} titleIconVariant={props.danger ? "warning" : undefined} />
      <ModalBody>
        <div ref={alertRef} tabIndex={-1} className="vcp-form-alert">
          <ErrorAlert error={error} title={props.failure} />
        </div>
        <FieldErrorsContext.Provider value={fieldErrors}>
          <Form id={props.id} onSubmit={submit} noValidate>
            {props.children}
          </Form>
        </FieldErrorsContext.Provider>
      </ModalBody>
      <ModalFooter>
        <Button
          type="submit"
          form={props.id}
          variant={props.danger ? "danger" : "primary"}
          isLoading={busy}
          isDisabled={busy}
        >
          {props.submitLabel}
        </Button>
        <Button variant="link" onClick={props.onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

/** A dialog that shows a result once (a new key or token) with a Done button. */
export function ResultModal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="result-title">
      <ModalHeader title={title} labelId="result-title" />
      <ModalBody>{children}</ModalBody>
      <ModalFooter>
        <Button onClick={onClose}>Done</Button>
      </ModalFooter>
    </Modal>
  );
}

/** "Delete user alice?" with the API's refusal shown in place. */
export function ConfirmDelete(props: {
  what: string;
  name: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  detail?: ReactNode;
}) {
  return (
    <FormModal
      title={`Delete ${props.what} ${props.name}?`}
      id="confirm-delete"
      submitLabel="Delete"
      danger
      variant="small"
      failure={`The ${props.what} was not deleted`}
      onSubmit={async () => {
        await props.onConfirm();
        return undefined;
      }}
      onClose={props.onClose}
    >
      <p>{props.detail ?? `The ${props.what} ${props.name} will be deleted. This cannot be undone.`}</p>
    </FormModal>
  );
}
