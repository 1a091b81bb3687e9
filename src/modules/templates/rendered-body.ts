// The text a contact received from a template (decisions §19: "Template messages show the text the contact
// received"; D240): the template's BODY with the body parameters that were sent in place of its placeholders.
import type { SendComponent, TemplateComponent } from '../../messaging/platform.ts';
import { isPositional } from './template-model.ts';

const placeholder = /\{\{([^{}]*)\}\}/g;

/**
 * The BODY's text as sent: positional placeholders take the body parameters in order ({{1}} the first), named ones
 * the parameter of that name. Null when the template has no body text (a carousel's cards carry their own).
 */
export function renderedBody(
  templateComponents: readonly (TemplateComponent | Record<string, unknown>)[],
  sendComponents: readonly SendComponent[],
): string | null {
  const body = templateComponents.find((component) => String(component.type).toUpperCase() === 'BODY');
  const text = typeof body?.text === 'string' ? body.text : null;
  if (text === null) return null;
  const sent = sendComponents.find((component) => component.type === 'body');
  const values = (sent?.parameters ?? []).flatMap((parameter) => (parameter.type === 'text' ? [parameter] : []));
  return text.replace(placeholder, (whole, inner: string) => {
    const name = inner.trim();
    const value = isPositional(name)
      ? values[Number(name) - 1]
      : values.find((parameter) => parameter.parameterName === name);
    return value?.text ?? whole;
  });
}
