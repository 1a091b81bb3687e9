// The console is built into console/dist and served by the API process at /app (src/http/console.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { firstPageBudget } from './first-page-budget.ts';

export default defineConfig({
  base: '/app/',
  plugins: [react(), firstPageBudget()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or styles: the Content-Security-Policy allows 'self' only (decisions §17).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    // Not one chunk's raw size but the first page's gzipped JavaScript is the budget: firstPageBudget() warns (D329).
    chunkSizeWarningLimit: Number.POSITIVE_INFINITY,
  },
  server: { proxy: { '/app/api': 'http://127.0.0.1:8080' } },
});
