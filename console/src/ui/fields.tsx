// Form fields on React Aria Components: a label, the input, and the API's message for that field (422 `loc`): given,
// or read from the enclosing ApiForm by the field's name (D327).
import type { ReactNode } from 'react';
import {
  Button,
  Checkbox,
  CheckboxGroup,
  FieldError,
  Input,
  Label,
  ListBox,
  ListBoxItem,
  Popover,
  Select,
  SelectValue,
  Text,
  TextArea,
  TextField,
} from 'react-aria-components';
import { useFieldError } from './form.tsx';

interface Common {
  label: string;
  name: string;
  /** The API field whose message this shows (its `loc` after `body`, dotted), when not `name`. */
  field?: string;
  error?: string | undefined;
  description?: string;
  isRequired?: boolean;
}

export function TextInput({
  label,
  name,
  field,
  error: given,
  description,
  isRequired,
  type = 'text',
  value,
  defaultValue,
  onChange,
  multiline,
  autoComplete,
}: Common & {
  type?: 'text' | 'email' | 'password' | 'tel' | 'url' | 'search' | 'number' | 'date' | 'datetime-local';
  value?: string;
  defaultValue?: string;
  onChange?: (value: string) => void;
  multiline?: boolean;
  autoComplete?: string;
}) {
  const error = useFieldError(field ?? name, given);
  return (
    <TextField
      className="field"
      name={name}
      type={type}
      value={value}
      defaultValue={defaultValue}
      onChange={onChange}
      isRequired={isRequired}
      isInvalid={Boolean(error)}
      autoComplete={autoComplete}
    >
      <Label>{label}</Label>
      {multiline ? <TextArea rows={4} /> : <Input />}
      {description ? <Text slot="description">{description}</Text> : null}
      <FieldError>{error}</FieldError>
    </TextField>
  );
}

export interface Option {
  id: string;
  label: string;
}

export function SelectInput({
  label,
  name,
  field,
  error: given,
  description,
  options,
  value,
  onChange,
  placeholder,
}: Common & {
  options: Option[];
  value: string | null;
  onChange: (value: string | null) => void;
  placeholder?: string;
}) {
  const error = useFieldError(field ?? name, given);
  return (
    <Select
      className="field"
      name={name}
      value={value}
      onChange={(key) => onChange(key === null ? null : String(key))}
      isInvalid={Boolean(error)}
      placeholder={placeholder ?? 'Choose…'}
    >
      <Label>{label}</Label>
      <Button className="select-button">
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      {description ? <Text slot="description">{description}</Text> : null}
      <FieldError>{error}</FieldError>
      <Popover className="popover">
        <ListBox className="listbox" items={options}>
          {(option) => <ListBoxItem id={option.id}>{option.label}</ListBoxItem>}
        </ListBox>
      </Popover>
    </Select>
  );
}

/** Several choices (a MULTI_SELECT, members, scopes): the message of the list or of any of its items. */
export function CheckboxesInput({
  label,
  name,
  field,
  error: given,
  options,
  value,
  onChange,
  className = 'field',
}: Common & {
  options: { id: string; label: ReactNode }[];
  value: string[];
  onChange: (value: string[]) => void;
  className?: string;
}) {
  const error = useFieldError(field ?? name, given, true);
  return (
    <CheckboxGroup className={className} name={name} value={value} onChange={onChange} isInvalid={Boolean(error)}>
      <Label>{label}</Label>
      {options.map((option) => (
        <Checkbox key={option.id} value={option.id}>
          <span aria-hidden="true" className="checkbox-box" /> {option.label}
        </Checkbox>
      ))}
      {error ? <span className="field-error">{error}</span> : null}
    </CheckboxGroup>
  );
}

export function Actions({ children }: { children: ReactNode }) {
  return <div className="actions">{children}</div>;
}
