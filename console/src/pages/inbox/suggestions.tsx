// Suggestions while typing in a composer (decisions §19, D287): `@` offers the organization's people (a mention), `/`
// offers canned responses. The text area keeps the focus and says which option is active
// (`aria-activedescendant` over a `listbox`), as a combobox does: arrows move, Enter or Tab choose, Escape closes.
import {
  type KeyboardEvent,
  type ReactNode,
  type RefObject,
  type SyntheticEvent,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';

/**
 * Puts the caret where an insertion (a mention, a canned response) ends, as soon as React has written the new text
 * and before the next key is handled: a caret placed a frame later moved back over what the person typed meanwhile
 * ("today" became "odayt" in the browser suite). Call `place(caret)` with the insertion's text change.
 */
export function useCaretAfterInsert(area: RefObject<HTMLTextAreaElement | null>, text: string) {
  const pending = useRef<number | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the inserted text has been written.
  useLayoutEffect(() => {
    if (pending.current === null) return;
    area.current?.setSelectionRange(pending.current, pending.current);
    pending.current = null;
  }, [text]);
  return (caret: number) => {
    pending.current = caret;
  };
}

/** The word being typed at `caret` when it starts with `trigger` (at the start or after a space), else null. */
export function tokenAt(text: string, caret: number, trigger: string): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const at = before.lastIndexOf(trigger);
  if (at < 0 || (at > 0 && !/\s/.test(before[at - 1] as string))) return null;
  const query = before.slice(at + trigger.length);
  return /\s/.test(query) ? null : { start: at, query };
}

export interface SuggestionState {
  /** Props for the text area: the listbox it controls and its active option. */
  inputProps: {
    'aria-autocomplete': 'list';
    'aria-controls'?: string;
    'aria-activedescendant'?: string;
  };
  /** Handles the keys of an open list; true when the key was the list's. */
  onKeyDown: (event: KeyboardEvent) => boolean;
  list: ReactNode;
}

export function useSuggestions<T>({
  token,
  items,
  keyOf,
  render,
  label,
  onChoose,
  empty,
}: {
  token: { start: number; query: string } | null;
  items: T[];
  keyOf: (item: T) => string;
  render: (item: T) => ReactNode;
  label: string;
  onChoose: (item: T, token: { start: number; query: string }) => void;
  empty?: string;
}): SuggestionState {
  const id = useId();
  const [active, setActive] = useState(0);
  // Escape closes the list for the token it was pressed in; a new token opens it again.
  const [dismissed, setDismissed] = useState<number | null>(null);
  const [lastToken, setLastToken] = useState<string | null>(null);
  const tokenKey = token ? `${token.start}:${token.query}` : null;
  if (tokenKey !== lastToken) {
    setLastToken(tokenKey);
    setActive(0);
    if (token?.start !== dismissed) setDismissed(null);
  }
  const open = token !== null && dismissed !== token.start;
  const index = Math.min(active, Math.max(items.length - 1, 0));
  const optionId = (i: number) => `${id}-option-${i}`;
  const choose = (item: T) => {
    if (token) onChoose(item, token);
  };
  return {
    inputProps: {
      'aria-autocomplete': 'list',
      ...(open ? { 'aria-controls': `${id}-list` } : {}),
      ...(open && items.length > 0 ? { 'aria-activedescendant': optionId(index) } : {}),
    },
    onKeyDown: (event) => {
      if (!open) return false;
      if (event.key === 'Escape') {
        setDismissed(token.start);
        return true;
      }
      if (items.length === 0) return false;
      if (event.key === 'ArrowDown') setActive((index + 1) % items.length);
      else if (event.key === 'ArrowUp') setActive((index - 1 + items.length) % items.length);
      else if (event.key === 'Enter' || event.key === 'Tab') choose(items[index] as T);
      else return false;
      return true;
    },
    list: open ? (
      <div className="suggestions">
        {items.length > 0 ? (
          <div role="listbox" id={`${id}-list`} aria-label={label} className="listbox">
            {items.map((item, i) => (
              <div
                key={keyOf(item)}
                tabIndex={-1}
                id={optionId(i)}
                role="option"
                aria-selected={i === index}
                className={i === index ? 'suggestion suggestion-active' : 'suggestion'}
                // The text area keeps the focus: a click chooses without taking it.
                onMouseDown={(event) => {
                  event.preventDefault();
                  choose(item);
                }}
              >
                {render(item)}
              </div>
            ))}
          </div>
        ) : empty ? (
          <p className="muted" id={`${id}-list`}>
            {empty}
          </p>
        ) : null}
      </div>
    ) : null,
  };
}

/** Replaces the token with `insert` and puts the caret after it. */
export function replaceToken(
  text: string,
  token: { start: number; query: string },
  insert: string,
): { text: string; caret: number } {
  const end = token.start + 1 + token.query.length;
  const next = text.slice(0, token.start) + insert + text.slice(end);
  return { text: next, caret: token.start + insert.length };
}

/**
 * A composer's text area: the open list's keys first, then Enter sends and Shift+Enter starts a new line; the caret is
 * followed so that the word being typed is known.
 */
export function composerAreaProps(suggestions: SuggestionState, setCaret: (caret: number) => void, send: () => void) {
  return {
    ...suggestions.inputProps,
    onSelect: (event: SyntheticEvent<HTMLTextAreaElement>) => setCaret(event.currentTarget.selectionStart),
    onKeyDown: (event: KeyboardEvent<HTMLTextAreaElement>) => {
      if (suggestions.onKeyDown(event)) event.preventDefault();
      else if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
        event.preventDefault();
        send();
      }
    },
  };
}
