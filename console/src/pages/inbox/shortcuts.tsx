// The inbox's keyboard shortcuts (decisions §19, D288): `j`/`k` move to the next/previous conversation of the list,
// `r` focuses the reply box (or the note being written), `e` resolves the open conversation, `?` lists them. Never
// while typing in a field, with a modifier held, or while a dialog or popover is open.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Button, Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import type { InboxConversation } from './conversation-types.ts';

export const SHORTCUTS: [string, string][] = [
  ['j', 'Next conversation'],
  ['k', 'Previous conversation'],
  ['r', 'Write in the reply box'],
  ['e', 'Resolve the open conversation'],
  ['?', 'Show these shortcuts'],
];

/** Whether a key press belongs to something else: a field being typed in, a dialog, a list box open. */
function typing(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return true;
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  if (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return true;
  return Boolean(target.closest('[role="dialog"], [role="alertdialog"], [role="listbox"], [role="menu"]'));
}

/** The composer on screen (a reply's or a note's). */
export const focusComposer = () => document.querySelector<HTMLTextAreaElement>('textarea[data-composer]')?.focus();

export function useInboxShortcuts({
  items,
  conversationId,
  search,
  onHelp,
}: {
  items: InboxConversation[];
  conversationId: string | undefined;
  search: string;
  onHelp: () => void;
}): void {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  // The newest values, read by one listener added once.
  const state = useRef({ items, conversationId, search, onHelp });
  state.current = { items, conversationId, search, onHelp };
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event)) return;
      const { items, search, onHelp } = state.current;
      // The address, not the last render: a key pressed right after a move must start from where the move went.
      const conversationId = /\/inbox\/([^/?#]+)/.exec(window.location.pathname)?.[1] ?? state.current.conversationId;
      const index = items.findIndex((item) => item.id === conversationId);
      const go = (next: InboxConversation | undefined) => {
        if (next) navigate(`/inbox/${next.id}${search}`);
      };
      switch (event.key) {
        case 'j':
          go(items[index + 1] ?? (index < 0 ? items[0] : undefined));
          break;
        case 'k':
          go(index > 0 ? items[index - 1] : undefined);
          break;
        case 'r':
          if (!conversationId) return;
          focusComposer();
          break;
        case 'e':
          if (!conversationId) return;
          void api.conversations.update(conversationId, { status: 'resolved' }).then(
            () => queryClient.invalidateQueries({ queryKey: keys.conversations.all }),
            // A refusal is rare here (the conversation was deleted); its state is read again either way.
            () => queryClient.invalidateQueries({ queryKey: keys.conversations.all }),
          );
          break;
        case '?':
          onHelp();
          break;
        default:
          return;
      }
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [navigate, queryClient]);
}

export function ShortcutsDialog({ isOpen, onOpenChange }: { isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <ModalOverlay className="modal-overlay" isDismissable isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal className="modal">
        <Dialog>
          {({ close }) => (
            <>
              <Heading slot="title">Keyboard shortcuts</Heading>
              <dl className="fields">
                {SHORTCUTS.map(([key, what]) => (
                  <div key={key} className="contents">
                    <dt>
                      <kbd>{key}</kbd>
                    </dt>
                    <dd>{what}</dd>
                  </div>
                ))}
              </dl>
              <p className="muted">Not while typing in a field.</p>
              <div className="actions">
                <Button onPress={close}>Close</Button>
              </div>
            </>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
