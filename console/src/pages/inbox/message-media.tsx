// A message's file (decisions §15): an image is fetched through the API with the session, as a blob shown by an
// object URL (the console's CSP allows `img-src blob:`); any other file is a download link with its name.
import type { Message } from '@crm-messaging/sdk';
import { useEffect, useRef, useState } from 'react';
import { Button } from 'react-aria-components';
import { after429, api, statusOf } from '../../api/client.ts';

function mediaPath(message: Message): string {
  return api.conversations.mediaUrl(message.conversation_id, message.id);
}

export function MessageMedia({ message }: { message: Message }) {
  const media = message.media;
  if (!media) return null;
  const isImage = message.type === 'image' || message.type === 'sticker' || media.mime_type?.startsWith('image/');
  if (isImage) return <MediaImage message={message} />;
  const name = media.filename ?? `${message.type} file`;
  return (
    <a className="attachment" href={mediaPath(message)} download={media.filename ?? ''}>
      Download {name}
    </a>
  );
}

function MediaImage({ message }: { message: Message }) {
  const [state, setState] = useState<{ url?: string; failed?: boolean }>({});
  const [attempt, setAttempt] = useState(0);
  const busyRetries = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: fetched again when "Try again" bumps the attempt
  useEffect(() => {
    const controller = new AbortController();
    let url: string | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    setState({});
    api.conversations
      .downloadMedia(message.conversation_id, message.id, { signal: controller.signal })
      .then((file) => file.response.blob())
      .then((blob) => {
        url = URL.createObjectURL(blob);
        setState({ url });
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        // The organization's budget for this second was spent (the page's reads share it): ask again after its
        // Retry-After, three times at most, rather than showing a failure (D154).
        if (statusOf(error) === 429 && busyRetries.current < 3) {
          busyRetries.current += 1;
          retry = setTimeout(() => setAttempt((n) => n + 1), after429(error));
          return;
        }
        setState({ failed: true });
      });
    return () => {
      if (retry) clearTimeout(retry);
      controller.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [message.conversation_id, message.id, attempt]);
  const alt = message.media?.caption ? `Image: ${message.media.caption}` : 'Image from the contact';
  if (state.failed)
    return (
      <p className="media-error" role="alert">
        The image could not be loaded. <Button onPress={() => setAttempt((n) => n + 1)}>Try again</Button>
      </p>
    );
  if (!state.url)
    return (
      <p className="muted" role="status">
        Fetching the image…
      </p>
    );
  return <img className="message-image" src={state.url} alt={alt} />;
}
