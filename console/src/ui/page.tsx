// Every page: its `<title>` (`<Page> · CRM`), one h1 that takes focus after a navigation (so a screen reader
// announces the new page), and room for the page's actions.
import { type ReactNode, useEffect, useRef } from 'react';

export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · CRM`;
  }, [title]);
}

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  usePageTitle(title);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    // Only after a navigation inside the app: the first load keeps the browser's own focus.
    if (document.activeElement && document.activeElement !== document.body) heading.current?.focus();
  }, []);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title" ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}
