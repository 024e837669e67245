// Builds one JavaScript connector into a WebAssembly component with componentize-js.
// Usage: node build.mjs <connector.js> <wit folder> <output .wasm>
// (`jco componentize` does the same from the command line where it works; on Node 20 it fails
// with "failed to get path metadata", so the library is called directly.)
import { componentize } from '@bytecodealliance/componentize-js';
import { writeFile } from 'node:fs/promises';

const [sourcePath, witPath, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: node build.mjs <connector.js> <wit folder> <output .wasm>');
  process.exit(2);
}
const { component } = await componentize({ sourcePath, witPath, worldName: 'connector' });
await writeFile(out, component);
