// The build's first-page budget (D329): the chunks it sums are the entry's and the inbox's with what they import
// statically, never a chunk that only another area loads.
import { describe, expect, it } from 'vitest';
import { firstPageChunks } from '../../../console/first-page-budget.ts';

const chunk = (fileName: string, imports: string[], extra: { isEntry?: boolean; facadeModuleId?: string } = {}) => ({
  type: 'chunk' as const,
  fileName,
  code: '',
  isEntry: extra.isEntry ?? false,
  facadeModuleId: extra.facadeModuleId ?? null,
  imports,
});

describe('firstPageChunks', () => {
  it('takes the entry and the inbox area with their static imports, once each, and no other area', () => {
    const chunks = [
      chunk('index.js', ['react.js', 'aria.js'], { isEntry: true, facadeModuleId: '/x/console/index.html' }),
      chunk('react.js', []),
      chunk('aria.js', ['react.js']),
      chunk('inbox.js', ['aria.js', 'table.js'], { facadeModuleId: '/x/console/src/pages/inbox/inbox.tsx' }),
      chunk('table.js', []),
      chunk('settings.js', ['forms.js'], { facadeModuleId: '/x/console/src/pages/settings/settings.tsx' }),
      chunk('forms.js', []),
    ];
    expect(
      firstPageChunks(chunks)
        .map((c) => c.fileName)
        .sort(),
    ).toEqual(['aria.js', 'inbox.js', 'index.js', 'react.js', 'table.js']);
  });
});
