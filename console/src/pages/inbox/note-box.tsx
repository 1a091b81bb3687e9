// A private note (decisions §19, D287): written beside the reply, never sent to the contact. Typing `@` offers the
// organization's people; each one chosen is written `@Name` and sent in `mention_ids` while its `@Name` stays in the
// text. Enter adds the note, Shift+Enter starts a new line, as the reply's composer.
import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Button, FieldError, Form, Label, Text, TextArea, TextField } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { FormError, useApiForm } from '../../ui/form.tsx';
import { type Person, personName, usePeople } from './people.ts';
import { composerAreaProps, replaceToken, tokenAt, useCaretAfterInsert, useSuggestions } from './suggestions.tsx';

/** The people whose name or email has a word starting with `query`, ignoring case; at most 8. */
export function matchPeople(people: Person[], query: string): Person[] {
  const wanted = query.toLowerCase();
  return people
    .filter((person) =>
      `${person.name ?? ''} ${person.email}`
        .toLowerCase()
        .split(/[\s@.]+/)
        .some((word) => word.startsWith(wanted)),
    )
    .slice(0, 8);
}

export function NoteBox({ conversationId }: { conversationId: string }) {
  const queryClient = useQueryClient();
  const { people } = usePeople();
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const [mentioned, setMentioned] = useState<Person[]>([]);
  const area = useRef<HTMLTextAreaElement>(null);
  const placeCaret = useCaretAfterInsert(area, text);
  const form = useApiForm({
    mutationFn: (body: { text: string; mention_ids: string[] }) => api.notes.create(conversationId, body),
    onSuccess: () => {
      setText('');
      setMentioned([]);
      void queryClient.invalidateQueries({ queryKey: keys.conversations.all });
    },
  });
  const token = tokenAt(text, caret, '@');
  const suggestions = useSuggestions({
    token,
    items: token ? matchPeople(people, token.query) : [],
    keyOf: (person) => person.id,
    render: (person) => (
      <>
        {personName(person)} <span className="muted">{person.email}</span>
      </>
    ),
    label: 'People to mention',
    empty: 'No one by that name.',
    onChoose: (person, at) => {
      const next = replaceToken(text, at, `@${personName(person)} `);
      setText(next.text);
      setCaret(next.caret);
      setMentioned((current) => (current.some((p) => p.id === person.id) ? current : [...current, person]));
      placeCaret(next.caret);
    },
  });
  const send = () => {
    if (!text.trim() || form.isPending) return;
    const mention_ids = mentioned.filter((person) => text.includes(`@${personName(person)}`)).map((p) => p.id);
    form.mutate({ text, mention_ids });
  };
  return (
    <Form
      className="form note-form"
      aria-label="Write a private note"
      validationBehavior="aria"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <FormError message={form.shown.message ?? form.fieldErrorUnder('mention_ids')} />
      <TextField
        className="field"
        value={text}
        onChange={(value) => {
          setText(value);
          setCaret(area.current?.selectionStart ?? value.length);
        }}
        isInvalid={Boolean(form.fieldError('text'))}
      >
        <Label>Private note</Label>
        <TextArea ref={area} rows={3} data-composer="note" {...composerAreaProps(suggestions, setCaret, send)} />
        <Text slot="description">Only your team sees it. Type @ to mention someone; Enter adds the note.</Text>
        <FieldError>{form.fieldError('text')}</FieldError>
      </TextField>
      {suggestions.list}
      <Button type="submit" className="primary" isDisabled={form.isPending || !text.trim()}>
        {form.isPending ? 'Adding…' : 'Add note'}
      </Button>
    </Form>
  );
}
