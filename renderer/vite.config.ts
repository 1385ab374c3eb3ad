// The console build. base './' because every hub serves it at / from renderer/dist and the
// desktop app loads it from its own scheme: no absolute asset paths.
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    // The hub serves only index.html and /assets/*: keep everything under assets/.
    assetsDir: 'assets',
    chunkSizeWarningLimit: 1200,
    sourcemap: false,
  },
  server: { port: 5173 },
});
