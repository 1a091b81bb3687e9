// Form fields on React Aria Components: a label, the input, and the API's message for that field (422 `loc`).
import type { ReactNode } from 'react';
import {
  Button,
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

interface Common {
  label: string;
  name: string;
  error?: string | undefined;
  description?: string;
  isRequired?: boolean;
}

export function TextInput({
  label,
  name,
  error,
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
  error,
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
      <FieldError>{error}</FieldError>
      <Popover className="popover">
        <ListBox className="listbox" items={options}>
          {(option) => <ListBoxItem id={option.id}>{option.label}</ListBoxItem>}
        </ListBox>
      </Popover>
    </Select>
  );
}

export function Actions({ children }: { children: ReactNode }) {
  return <div className="actions">{children}</div>;
}
