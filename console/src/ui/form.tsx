// The one form shell (D327): a mutation whose refusal is split into field messages (422 `loc`, D111) and a form
// message (a 409's code as a sentence), and `ApiForm`, which lays a form out around it: the fields, each reading its
// own message from the form by its name, the form's message (announced and focused), and a submit button that shows
// the pending state. Fields outside an ApiForm take their message as a prop.
import { type UseMutationOptions, useMutation } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useEffect, useRef } from 'react';
import { Button, Form } from 'react-aria-components';
import { type ShownError, showError } from './errors.ts';

export function useApiForm<TData, TVariables>(options: UseMutationOptions<TData, Error, TVariables>) {
  const mutation = useMutation(options);
  const shown: ShownError = mutation.error ? showError(mutation.error) : { fields: {}, message: undefined };
  return {
    ...mutation,
    shown,
    fieldError: (name: string): string | undefined => shown.fields[name],
    /** The first message at `name` or anywhere under it (`audience` for `audience.country.0`). */
    fieldErrorUnder: (name: string): string | undefined =>
      Object.entries(shown.fields).find(([key]) => key === name || key.startsWith(`${name}.`))?.[1],
  };
}

type ApiFormState = Pick<ReturnType<typeof useApiForm>, 'shown' | 'isPending' | 'fieldError' | 'fieldErrorUnder'>;

/** The messages of the enclosing ApiForm, by API field (its `loc` after `body`, dotted). */
const FieldErrors = createContext<Pick<ApiFormState, 'fieldError' | 'fieldErrorUnder'> | null>(null);

/**
 * A field's message: the one given, else the enclosing form's at `field` (`under`: or anywhere under it, for a
 * list's items: `member_ids.2`).
 */
export function useFieldError(field: string, given: string | undefined, under = false): string | undefined {
  const form = useContext(FieldErrors);
  return given ?? (under ? form?.fieldErrorUnder(field) : form?.fieldError(field));
}

/** The form-level message, announced and focused so that a keyboard user lands on it. */
export function FormError({ message }: { message: string | undefined }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  if (!message) return null;
  return (
    <div ref={ref} role="alert" tabIndex={-1} className="form-error">
      {message}
    </div>
  );
}

export function ApiForm({
  form,
  onSubmit,
  submit,
  label,
  labelledBy,
  inline = false,
  className,
  actions,
  children,
}: {
  /** What useApiForm returned: its field messages, form message and pending state (`fieldError` may be replaced). */
  form: ApiFormState;
  /** Called on submit (not while the last one is pending): usually `form.mutate(…)`. */
  onSubmit: () => void;
  /** The submit button's text. */
  submit: string;
  /** The form's accessible name, or the id of the heading that names it. */
  label?: string;
  labelledBy?: string;
  /** A row of fields (a filter bar's shape) with the form's message below it; otherwise a column, message first. */
  inline?: boolean;
  /** Classes beside the layout's own (`card`, `form-wide`). */
  className?: string;
  /** Buttons beside the submit button (Cancel). */
  actions?: ReactNode;
  children: ReactNode;
}) {
  const message = <FormError message={form.shown.message} />;
  const button = (
    // Disabled, not React Aria's isPending: its announcement leaves a `role="img"` node naming the button, which has no
    // name once the page moves on (axe's role-img-alt).
    <Button type="submit" className="primary" isDisabled={form.isPending}>
      {submit}
    </Button>
  );
  const shell = (
    <Form
      validationBehavior="aria"
      className={[inline ? 'filters' : 'form', className].filter(Boolean).join(' ')}
      aria-label={label}
      aria-labelledby={labelledBy}
      aria-busy={form.isPending || undefined}
      onSubmit={(event) => {
        event.preventDefault();
        if (!form.isPending) onSubmit();
      }}
    >
      {inline ? null : message}
      <FieldErrors.Provider value={form}>{children}</FieldErrors.Provider>
      {actions ? (
        <div className="actions">
          {button}
          {actions}
        </div>
      ) : (
        button
      )}
    </Form>
  );
  return inline ? (
    <>
      {shell}
      {message}
    </>
  ) : (
    shell
  );
}
