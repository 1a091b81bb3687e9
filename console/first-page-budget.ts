// The first page's JavaScript budget (decisions §17, D118), in one place: the build warns when the first page after
// sign-in would pass it, and the browser suite (test/console/console.test.ts) fails when the page it loads does (D329).
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

/** At most this much gzipped JavaScript on the first page after sign-in (the inbox). */
export const FIRST_PAGE_JS_BUDGET = 250 * 1024;

/** The area the first page after sign-in shows (routes.tsx: `/` goes to the inbox). */
const FIRST_AREA = '/src/pages/inbox/inbox.tsx';

interface Chunk {
  type: 'chunk';
  fileName: string;
  code: string;
  isEntry: boolean;
  facadeModuleId: string | null;
  imports: string[];
}

/** The chunks the first page loads: the entry's and the first area's, with every chunk they import statically. */
export function firstPageChunks(chunks: Chunk[], area = FIRST_AREA): Chunk[] {
  const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const loaded = new Map<string, Chunk>();
  const visit = (chunk: Chunk | undefined) => {
    if (!chunk || loaded.has(chunk.fileName)) return;
    loaded.set(chunk.fileName, chunk);
    for (const file of chunk.imports) visit(byFile.get(file));
  };
  for (const chunk of chunks) if (chunk.isEntry || chunk.facadeModuleId?.endsWith(area)) visit(chunk);
  return [...loaded.values()];
}

/** Gzipped as the browser suite measures it (level 9). */
export const gzippedSize = (code: string) => gzipSync(code, { level: 9 }).length;

/** A Vite plugin: says the first page's gzipped JavaScript after each build, and warns past the budget. */
export function firstPageBudget(budget = FIRST_PAGE_JS_BUDGET): Plugin {
  return {
    name: 'first-page-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((output): output is never => output.type === 'chunk') as Chunk[];
      const first = firstPageChunks(chunks);
      if (!first.some((chunk) => chunk.facadeModuleId?.endsWith(FIRST_AREA))) {
        this.warn(`first-page budget: no chunk for ${FIRST_AREA}; the first page is not measured`);
        return;
      }
      const total = first.reduce((sum, chunk) => sum + gzippedSize(chunk.code), 0);
      const figure = `${(total / 1024).toFixed(1)} KB gzipped JavaScript in ${first.length} files (budget ${budget / 1024} KB)`;
      if (total > budget) this.warn(`the first page after sign-in loads ${figure}: over the budget`);
      else this.info(`first page after sign-in: ${figure}`);
    },
  };
}
