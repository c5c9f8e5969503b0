import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The console is built into dist/console and served by the API at /. `npm run console:dev` serves
 * it with reloads on :5173 and sends /api to a running service (AGENTSITE_URL, default :3000).
 */
export default defineConfig({
  root,
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // No inline scripts or styles: the service's Content-Security-Policy allows only 'self'.
    assetsInlineLimit: 0,
    rollupOptions: {
      onwarn(warning, warn) {
        // react-router marks its modules "use client" (for server components): meaningless in a bundle.
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') {
          warn(warning);
        }
      },
    },
  },
  server: {
    proxy: { '/api': process.env.AGENTSITE_URL ?? 'http://localhost:3000' },
  },
});
