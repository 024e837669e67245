// Builds one JavaScript connector into a WebAssembly component with componentize-js.
// Usage: node build.mjs <connector.js> <wit folder> <output .wasm>
// A connector may import the shared modules of `sdk/` (a DAV client, iCalendar and vCard): it is
// bundled into one module first (rolldown), the host's interfaces left as imports. (`jco
// componentize` does the same from the command line where it works; on Node 20 it fails with
// "failed to get path metadata", so the library is called directly.)
import { componentize } from '@bytecodealliance/componentize-js';
import { rolldown } from 'rolldown';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [sourcePath, witPath, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: node build.mjs <connector.js> <wit folder> <output .wasm>');
  process.exit(2);
}
const bundle = await rolldown({
  input: sourcePath,
  external: [/^quarry:/, /^wasi:/],
  platform: 'neutral',
  logLevel: 'warn',
});
const { output } = await bundle.generate({ format: 'esm' });
const dir = await mkdtemp(join(tmpdir(), 'quarry-js-'));
try {
  const bundled = join(dir, 'connector.js');
  await writeFile(bundled, output[0].code);
  const { component } = await componentize({ sourcePath: bundled, witPath, worldName: 'connector' });
  await writeFile(out, component);
} finally {
  await rm(dir, { recursive: true, force: true });
}
