// A person's own availability (decisions §19: a person marks themselves available or away; auto-assignment gives
// conversations only to available members; D278), a switch in the frame's header beside their name. The state shown
// is the server's: the session carries `available` (true by default), and a change refreshes the session and the
// people lists rather than patching them by hand.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Switch } from 'react-aria-components';
import { api } from '../api/client.ts';
import { keys } from '../api/keys.ts';
import { showError } from './errors.ts';
import { useSession } from './session.tsx';

export function AvailabilitySwitch() {
  const { user } = useSession();
  const queryClient = useQueryClient();
  const available = user.available;
  const change = useMutation({
    mutationFn: (available: boolean) => api.console.me.update({ available }),
    onSettled: async () => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: keys.session }),
        queryClient.invalidateQueries({ queryKey: keys.users.all }),
      ]);
    },
  });
  // While a change is on its way the switch shows it; the refreshed session settles it either way.
  const shown = change.isPending ? (change.variables ?? available) : available;
  return (
    <span className="availability">
      <Switch isSelected={shown} onChange={(value) => change.mutate(value)} isDisabled={change.isPending}>
        <span className="switch-indicator" aria-hidden="true" /> Available
      </Switch>
      {change.isError ? (
        <span role="alert" className="field-error">
          {showError(change.error).message ?? 'Could not change your availability.'}
        </span>
      ) : null}
    </span>
  );
}
