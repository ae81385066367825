// Form fields that say what is wrong where the user is looking: a required field left empty, or a field the API
// refused (its Status causes name the field), shows its message under the input, which turns red and takes the
// focus; a refusal that names no field shows at the top of the dialog.

import { FormGroup, FormHelperText, HelperText, HelperTextItem } from "@patternfly/react-core";
import { cloneElement, createContext, isValidElement, type ReactElement, type ReactNode, useContext } from "react";
import type { FieldErrors } from "../lib/field-errors.ts";

export { type FieldErrors, missing } from "../lib/field-errors.ts";

export const FieldErrorsContext = createContext<FieldErrors>({});

export interface FieldProps {
  /** The input's id (what labels and errors point at). */
  id: string;
  label: string;
  isRequired?: boolean;
  /** A hint shown under the input while it has no error. */
  helper?: ReactNode;
  /** The input: a PatternFly TextInput, TextArea or FormSelect (it gets validated="error" on an error). */
  children: ReactNode;
}

export function Field({ id, label, isRequired, helper, children }: FieldProps) {
  const error = useContext(FieldErrorsContext)[id];
  const helperId = `${id}-helper`;
  const input =
    error && isValidElement(children)
      ? cloneElement(children as ReactElement<Record<string, unknown>>, {
          validated: "error",
          "aria-describedby": helperId,
        })
      : children;
  return (
    <FormGroup label={label} isRequired={isRequired} fieldId={id}>
      {input}
      {(error || helper) && (
        <FormHelperText>
          <HelperText id={helperId}>
            <HelperTextItem variant={error ? "error" : "default"}>{error ?? helper}</HelperTextItem>
          </HelperText>
        </FormHelperText>
      )}
    </FormGroup>
  );
}
