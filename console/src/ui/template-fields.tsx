// A template's send fields by name (decisions §7, §15, §16): its placeholders as the template shows them, link
// suffixes, header media and a coupon, and a preview filled with the values. Shared by a new broadcast and a
// template reply in the inbox, so both ask for the same things in the same words; the server is the one judge.
import type { SendRequirements } from '@crm-messaging/sdk';
import { TextInput } from './fields.tsx';

type Variable = SendRequirements['variables'][number];

export interface TemplateValues {
  variables: Record<string, string>;
  url_suffixes: Record<string, string>;
  header_media_url: string;
  coupon_code: string;
}

export const NO_TEMPLATE_VALUES: TemplateValues = {
  variables: {},
  url_suffixes: {},
  header_media_url: '',
  coupon_code: '',
};

/** `body {{1}}`, `header {{first_name}}`, `card 1 body {{2}}`: a token as the template shows it. */
export function placeholderLabel(variable: Variable): string {
  const card = variable.card_index === null ? '' : `Card ${variable.card_index + 1} `;
  const component = variable.component === 'header' ? 'Header' : 'Body';
  return `${card}${card ? component.toLowerCase() : component} {{${variable.placeholder}}}`;
}

/** The body text with each placeholder filled by its value (or left as `{{…}}`), for the preview. */
export function previewOf(text: string, component: 'header' | 'body', values: Record<string, string>): string {
  return text.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/g, (match, placeholder: string) => {
    const value = values[`${component}.${placeholder}`];
    return value ? value : match;
  });
}

export function componentText(components: unknown, type: string): string | undefined {
  if (!Array.isArray(components)) return undefined;
  const found = components.find((c) => (c as { type?: string }).type === type) as { text?: string } | undefined;
  return found?.text;
}

/** The send fields of a request body: only what the template asks for and was filled. */
export function sendFieldsOf(
  values: TemplateValues,
  requirements: SendRequirements | undefined,
): Partial<{
  variables: Record<string, string>;
  url_suffixes: Record<string, string>;
  header_media_url: string;
  coupon_code: string;
}> {
  const fields: ReturnType<typeof sendFieldsOf> = {};
  const variables = Object.fromEntries(
    Object.entries(values.variables).filter(
      ([token, value]) => value && requirements?.variables.some((v) => v.token === token),
    ),
  );
  if (Object.keys(variables).length > 0) fields.variables = variables;
  const suffixes = Object.fromEntries(
    Object.entries(values.url_suffixes).filter(
      ([key, value]) => value && requirements?.url_suffixes.some((s) => s.key === key),
    ),
  );
  if (Object.keys(suffixes).length > 0) fields.url_suffixes = suffixes;
  if (values.header_media_url && requirements?.media.some((m) => m.token === 'header.media'))
    fields.header_media_url = values.header_media_url;
  if (values.coupon_code && requirements?.coupon_code.required) fields.coupon_code = values.coupon_code;
  return fields;
}

interface FieldErrors {
  fieldError: (name: string) => string | undefined;
  fieldErrorUnder: (name: string) => string | undefined;
}

/** The inputs a template asks for; `describe` says where a variable's value goes (every contact, this one…). */
export function TemplateFields({
  requirements,
  values,
  onChange,
  errors,
  describe,
}: {
  requirements: SendRequirements;
  values: TemplateValues;
  onChange: (values: TemplateValues) => void;
  errors: FieldErrors;
  describe: (variable: Variable) => string | undefined;
}) {
  const set = <K extends keyof TemplateValues>(key: K, value: TemplateValues[K]) =>
    onChange({ ...values, [key]: value });
  const req = requirements;
  return (
    <>
      {req.variables.length + req.url_suffixes.length + req.media.length === 0 && !req.coupon_code.required ? (
        <p className="muted">This template has no variables.</p>
      ) : null}
      {req.variables.map((variable) => (
        <TextInput
          key={variable.token}
          label={placeholderLabel(variable)}
          name={`variables.${variable.token}`}
          value={values.variables[variable.token] ?? ''}
          onChange={(value) => set('variables', { ...values.variables, [variable.token]: value })}
          description={describe(variable)}
          error={errors.fieldError(`variables.${variable.token}`) ?? errors.fieldError('variables')}
        />
      ))}
      {req.url_suffixes.map((suffix) => (
        <TextInput
          key={suffix.key}
          label={`Link suffix of button ${suffix.button_index + 1}`}
          name={`url_suffixes.${suffix.key}`}
          description={`Appended to ${suffix.url}`}
          value={values.url_suffixes[suffix.key] ?? ''}
          onChange={(value) => set('url_suffixes', { ...values.url_suffixes, [suffix.key]: value })}
          error={errors.fieldErrorUnder(`url_suffixes.${suffix.key}`)}
        />
      ))}
      {req.media.some((m) => m.token === 'header.media') ? (
        <TextInput
          label="Header media URL"
          name="header_media_url"
          type="url"
          value={values.header_media_url}
          onChange={(value) => set('header_media_url', value)}
          error={errors.fieldError('header_media_url')}
        />
      ) : null}
      {req.coupon_code.required ? (
        <TextInput
          label="Coupon code"
          name="coupon_code"
          value={values.coupon_code}
          onChange={(value) => set('coupon_code', value)}
          error={errors.fieldError('coupon_code')}
        />
      ) : null}
    </>
  );
}

/** The template's header and body with the values filled in. */
export function TemplatePreview({ components, variables }: { components: unknown; variables: Record<string, string> }) {
  const body = componentText(components, 'BODY');
  const header = componentText(components, 'HEADER');
  return (
    <div className="preview">
      {header ? <strong>{previewOf(header, 'header', variables)}</strong> : null}
      {header ? '\n' : ''}
      {body ? previewOf(body, 'body', variables) : <span className="muted">Choose a template to see its message.</span>}
    </div>
  );
}
