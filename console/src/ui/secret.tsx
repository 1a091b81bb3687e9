// A secret shown once (a new API key, a webhook signing secret) with a copy button.
import { useState } from 'react';
import { Button } from 'react-aria-components';

export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="notice" role="status">
      <p>
        <strong>{label}</strong>: shown once. Copy it now; it cannot be shown again.
      </p>
      <code className="secret">{value}</code>{' '}
      <Button
        onPress={() =>
          void navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : `Copy ${label.toLowerCase()}`}
      </Button>
    </div>
  );
}
