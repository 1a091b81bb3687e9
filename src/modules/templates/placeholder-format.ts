// Placeholder rules shared by every text of a template (header, body, card bodies): one format per template.

import { isPositional, placeholderNames } from './template-model.ts';

type Loc = (string | number)[];
// Structurally a TemplateProblem; declared here so the two files do not import each other.
type Problem = { loc: Loc; msg: string; type: string; ctx?: Record<string, unknown> };
const namedPlaceholder = /^[a-z][a-z0-9_]*$/;

// Placeholders are all positional ({{1}}, {{2}}, … from 1 without gaps in each text) or all named (lowercase).
export function checkPlaceholderFormat(texts: { loc: Loc; text: string }[], problems: Problem[], prefix: Loc): void {
  let positional = false;
  let named = false;
  for (const { loc, text } of texts) {
    const names = placeholderNames(text);
    for (const name of names) {
      if (isPositional(name)) positional = true;
      else if (namedPlaceholder.test(name)) named = true;
      else
        problems.push({
          loc,
          msg: `Invalid placeholder {{${name}}}`,
          type: 'invalid_placeholder',
          ctx: { placeholder: name },
        });
    }
    const numbers = names
      .filter(isPositional)
      .map(Number)
      .sort((a, b) => a - b);
    if (numbers.some((value, index) => value !== index + 1)) {
      problems.push({
        loc,
        msg: 'Positional placeholders must run {{1}}, {{2}}, … without gaps',
        type: 'placeholders_not_sequential',
      });
    }
  }
  if (positional && named) {
    problems.push({
      loc: prefix,
      msg: 'Placeholders must be all positional or all named',
      type: 'mixed_placeholders',
    });
  }
}
