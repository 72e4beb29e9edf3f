// Bundles src/ into dist/ (embedded by package xbo/web). Deterministic: no
// timestamps or hashes, so the same package-lock.json gives the same bundle.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';

const out = new URL('./dist/', import.meta.url).pathname;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
writeFileSync(out + '.gitkeep', '');
await esbuild.build({
  entryPoints: ['src/app.js'],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  outfile: out + 'app.js',
  legalComments: 'linked',
  logLevel: 'info',
});
copyFileSync('src/index.html', out + 'index.html');
copyFileSync('src/app.css', out + 'app.css');
