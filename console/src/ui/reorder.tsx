// Reordering with the keyboard as with the mouse: "Move up"/"Move down" buttons named after the item.
import { Button } from 'react-aria-components';

export function moved<T>(items: T[], index: number, delta: -1 | 1): T[] {
  const next = [...items];
  const [item] = next.splice(index, 1);
  next.splice(index + delta, 0, item as T);
  return next;
}

export function MoveButtons({
  name,
  index,
  count,
  onMove,
  isDisabled,
}: {
  name: string;
  index: number;
  count: number;
  onMove: (delta: -1 | 1) => void;
  isDisabled?: boolean;
}) {
  return (
    <span className="actions">
      <Button aria-label={`Move ${name} up`} isDisabled={isDisabled || index === 0} onPress={() => onMove(-1)}>
        ↑
      </Button>
      <Button aria-label={`Move ${name} down`} isDisabled={isDisabled || index === count - 1} onPress={() => onMove(1)}>
        ↓
      </Button>
    </span>
  );
}
