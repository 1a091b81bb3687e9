// The assistant's FAQs (decisions §20): question and answer pairs, added, edited and removed; the API's 422 at
// each pair's field (`faqs.N.answer`), read from the enclosing form (D327).
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { TextInput } from '../../../ui/fields.tsx';

export interface FaqRow {
  id: number;
  question: string;
  answer: string;
}

export function FaqRows({ rows, onChange }: { rows: FaqRow[]; onChange: (rows: FaqRow[]) => void }) {
  const [nextId, setNextId] = useState(rows.length);
  const setRow = (id: number, change: Partial<FaqRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));
  return (
    <fieldset className="property-filters">
      <legend>Frequently asked questions</legend>
      {rows.length === 0 ? <p className="muted">No FAQs yet.</p> : null}
      <ul className="rows">
        {rows.map((row, index) => (
          <li key={row.id} className="faq">
            <TextInput
              label={`Question ${index + 1}`}
              name={`faqs.${index}.question`}
              value={row.question}
              onChange={(question) => setRow(row.id, { question })}
            />
            <TextInput
              label={`Answer ${index + 1}`}
              name={`faqs.${index}.answer`}
              multiline
              value={row.answer}
              onChange={(answer) => setRow(row.id, { answer })}
            />
            <Button
              aria-label={`Remove question ${index + 1}`}
              onPress={() => onChange(rows.filter((r) => r.id !== row.id))}
            >
              Remove
            </Button>
          </li>
        ))}
      </ul>
      <Button
        onPress={() => {
          onChange([...rows, { id: nextId, question: '', answer: '' }]);
          setNextId((n) => n + 1);
        }}
      >
        Add a question
      </Button>
    </fieldset>
  );
}
