// Settings → Business hours (decisions §20): enabled, the week as rows of day, open and close (a day may appear
// twice; a day not listed is closed) and the away message, in the organization's timezone. The API's 422s are shown
// at their rows (`week.N.close`).
import type { BodyOf } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button, Switch } from 'react-aria-components';
import { api } from '../../../api/client.ts';
import { SelectInput, TextInput } from '../../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../../ui/form.tsx';
import { useSession } from '../../../ui/session.tsx';
import { QueryView } from '../../../ui/states.tsx';
import { automationKeys } from './automation-api.ts';
import { SettingsFrame, sentence } from './settings-frame.tsx';

type BusinessHours = BodyOf<'putBusinessHours'>;
type Day = NonNullable<BusinessHours['week']>[number]['day'];
interface Row {
  id: number;
  day: Day;
  open: string;
  close: string;
}

const DAYS: { id: Day; label: string }[] = [
  { id: 'mon', label: 'Monday' },
  { id: 'tue', label: 'Tuesday' },
  { id: 'wed', label: 'Wednesday' },
  { id: 'thu', label: 'Thursday' },
  { id: 'fri', label: 'Friday' },
  { id: 'sat', label: 'Saturday' },
  { id: 'sun', label: 'Sunday' },
];

export function BusinessHoursPage() {
  const hours = useQuery({ queryKey: automationKeys.businessHours, queryFn: () => api.businessHours.get() });
  return (
    <SettingsFrame title="Business hours">
      <QueryView query={hours}>{(data) => <BusinessHoursForm saved={data} />}</QueryView>
    </SettingsFrame>
  );
}

function BusinessHoursForm({ saved }: { saved: BusinessHours }) {
  const { organization } = useSession();
  const queryClient = useQueryClient();
  const [enabled, setEnabled] = useState(saved.enabled);
  const [rows, setRows] = useState<Row[]>(() => (saved.week ?? []).map((interval, id) => ({ id, ...interval })));
  const [nextId, setNextId] = useState((saved.week ?? []).length);
  const [away, setAway] = useState(saved.away_message?.text ?? '');
  const [notice, setNotice] = useState('');
  const save = useApiForm({
    mutationFn: (body: BusinessHours) => api.businessHours.put(body),
    onSuccess: (data) => {
      queryClient.setQueryData(automationKeys.businessHours, data);
      setNotice('Business hours saved.');
    },
  });
  useEffect(() => {
    if (save.isPending) setNotice('');
  }, [save.isPending]);
  const at = (name: string) => sentence(save.fieldError(name));
  const setRow = (id: number, change: Partial<Row>) =>
    setRows((current) => current.map((row) => (row.id === id ? { ...row, ...change } : row)));
  return (
    <>
      <ApiForm
        form={{ ...save, fieldError: at }}
        className="card form-wide"
        label="Business hours"
        submit="Save business hours"
        onSubmit={() =>
          save.mutate({
            enabled,
            week: rows.map(({ day, open, close }) => ({ day, open, close })),
            away_message: away.trim() === '' ? null : { text: away },
          })
        }
      >
        <p className="muted">
          Times are in the organization’s timezone, {organization.timezone}. A day not listed is closed; a day may have
          more than one row.
        </p>
        <Switch isSelected={enabled} onChange={setEnabled}>
          <span className="switch-indicator" aria-hidden="true" /> Business hours enabled
        </Switch>
        {enabled ? null : <p className="muted">While disabled the organization is always open (no away message).</p>}
        <fieldset className="property-filters">
          <legend>Opening hours</legend>
          {rows.length === 0 ? <p className="muted">No opening hours: closed every day.</p> : null}
          <ul className="rows">
            {rows.map((row, index) => (
              <li key={row.id}>
                <SelectInput
                  label={`Day ${index + 1}`}
                  name={`week.${index}.day`}
                  value={row.day}
                  onChange={(day) => setRow(row.id, { day: (day ?? 'mon') as Day })}
                  options={DAYS}
                />
                <TextInput
                  label={`Opens ${index + 1}`}
                  name={`week.${index}.open`}
                  description="HH:MM"
                  value={row.open}
                  onChange={(open) => setRow(row.id, { open })}
                />
                <TextInput
                  label={`Closes ${index + 1}`}
                  name={`week.${index}.close`}
                  description="HH:MM, 24:00 for midnight"
                  value={row.close}
                  onChange={(close) => setRow(row.id, { close })}
                />
                <Button
                  aria-label={`Remove opening hours ${index + 1}`}
                  onPress={() => setRows((current) => current.filter((r) => r.id !== row.id))}
                >
                  Remove
                </Button>
              </li>
            ))}
          </ul>
          {at('week') ? <p className="field-error">{at('week')}</p> : null}
          <Button
            onPress={() => {
              const last = rows.at(-1);
              const day = last ? (DAYS[(DAYS.findIndex((d) => d.id === last.day) + 1) % 7]?.id ?? 'mon') : 'mon';
              setRows((current) => [...current, { id: nextId, day, open: '09:00', close: '17:00' }]);
              setNextId((n) => n + 1);
            }}
          >
            Add opening hours
          </Button>
        </fieldset>
        <TextInput
          label="Away message"
          name="away_message.text"
          multiline
          description="Sent once per closed period to a contact who writes while closed; empty sends none."
          value={away}
          onChange={setAway}
          error={sentence(save.fieldErrorUnder('away_message'))}
        />
      </ApiForm>
      {notice ? <p role="status">{notice}</p> : null}
    </>
  );
}
