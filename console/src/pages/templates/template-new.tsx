// Create a template (decisions §17, flow 5) with a preview of the message as the contact will see it. The server
// checks the name, the variables and the components; its 422 issues show at their field.
import type { TemplateInput } from '@crm-messaging/sdk';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { TEMPLATE_LANGUAGES } from '../../ui/template-languages.ts';

/** `{{1}}` or `{{name}}` filled with the example given for it, so the preview reads like a real message. */
function fill(text: string, examples: string[]): string {
  let index = 0;
  return text.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/g, (match) => examples[index++] || match);
}

export function NewTemplatePage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('en_US');
  const [category, setCategory] = useState<TemplateInput['category']>('UTILITY');
  const [header, setHeader] = useState('');
  const [body, setBody] = useState('');
  const [examples, setExamples] = useState('');
  const [footer, setFooter] = useState('');
  const exampleList = examples
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);

  const form = useApiForm({
    mutationFn: (input: TemplateInput) => api.templates.create(input),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: keys.templates.all });
      navigate('/templates');
    },
  });
  const submit = () => {
    const components: TemplateInput['components'] = [];
    if (header) components.push({ type: 'HEADER', format: 'TEXT', text: header });
    components.push({
      type: 'BODY',
      text: body,
      ...(exampleList.length > 0 ? { example: { body_text: [exampleList] } } : {}),
    });
    if (footer) components.push({ type: 'FOOTER', text: footer });
    form.mutate({ name, language, category, components });
  };

  return (
    <Page title="New template">
      <div className="two-columns">
        <ApiForm
          form={form}
          submit="Create template"
          onSubmit={submit}
          actions={
            <Link className="button" href="/templates">
              Cancel
            </Link>
          }
        >
          <TextInput
            label="Name"
            name="name"
            isRequired
            description="Lower case letters, digits and _."
            value={name}
            onChange={setName}
          />
          <SelectInput
            label="Language"
            name="language"
            value={language}
            onChange={(value) => setLanguage(value ?? 'en_US')}
            options={TEMPLATE_LANGUAGES}
          />
          <SelectInput
            label="Category"
            name="category"
            value={category}
            onChange={(value) => setCategory((value ?? 'UTILITY') as TemplateInput['category'])}
            options={['MARKETING', 'UTILITY', 'AUTHENTICATION'].map((id) => ({ id, label: id }))}
          />
          <TextInput
            label="Header (optional)"
            name="header"
            value={header}
            onChange={setHeader}
            error={form.fieldError('components.0.text')}
          />
          <TextInput
            label="Body"
            name="body"
            multiline
            isRequired
            description="Variables as {{1}}, {{2}}, …"
            value={body}
            onChange={setBody}
            error={form.fieldError(`components.${header ? 1 : 0}.text`) ?? form.fieldError('components')}
          />
          <TextInput
            label="Examples of the variables"
            name="examples"
            description="Separated by commas, in order."
            value={examples}
            onChange={setExamples}
          />
          <TextInput label="Footer (optional)" name="footer" value={footer} onChange={setFooter} />
        </ApiForm>
        <section aria-labelledby="preview-title">
          <h2 id="preview-title">Preview</h2>
          <div className="preview">
            {header ? <strong>{fill(header, exampleList)}</strong> : null}
            {header ? '\n' : ''}
            {body ? fill(body, exampleList) : <span className="muted">The message body appears here.</span>}
            {footer ? <span className="muted">{`\n${footer}`}</span> : null}
          </div>
        </section>
      </div>
    </Page>
  );
}
