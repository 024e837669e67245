// Quarry's JavaScript SDK: what a connector at quarry:connector@0.5.0 needs besides its own
// logic (bundled into each connector by build.mjs).
//
// `connector({...})` takes a connector's `listDocs`, `fetchContent` and `readFile` (and
// `validateConfig`) and answers the other calls of 0.5.0 as most connectors do, unless given:
// `fetchContents` (several small documents' texts in one call, each `fetchContent` on its own,
// one failing alone), `listChanges` (none: a full listing), `readScans` (no images) and `watch`
// (unsupported).
//
// Helpers: `settings`, `fail`, `log`, `progress`, `stableId`; `walk` lists a granted folder
// with one host call per folder (`host.read-folder`: names, kinds, sizes and times together);
// `readStart` reads a file's start in one call, `readRange` a part of it; `changedFiles` reads
// the host's change hints; `recognizeText` reads a gray image with the host's OCR; `batch` and
// `changes` build listings. `fetch` reaches the hosts the
// manifest and the user grant.

import {
  config,
  log as hostLog,
  progress as hostProgress,
  readFolder,
  readFileStart,
  recognizeText as hostRecognizeText,
} from 'quarry:connector/host@0.5.0';
import { connectorError } from './errors.js';

/** The largest part of a file `readRange` reads (the host's bound on one read). */
export const MAX_READ = 16 << 20;

/** The connector's settings, as the host checked them against the manifest. */
export function settings(entries = config()) {
  return Object.fromEntries(entries);
}

/** Throws a connector error the host shows to the user: `not-found`, `unavailable` (tried
 * again later), `invalid-config` or `other`. */
export function fail(tag, message) {
  throw connectorError(tag, message);
}

/** A line in Quarry's log under the plugin's id: `trace`, `debug`, `info`, `warn`, `error`. */
export function log(level, message) {
  hostLog(level, message);
}

/** Tells the user how far a long listing is ("reading notes", 120, 4000). */
export function progress(message, done, total) {
  hostProgress(message, BigInt(done), total === undefined ? undefined : BigInt(total));
}

/** A document id that stays the same for the same `key`: `prefix` and 16 hex digits (FNV-1a,
 * 64 bits, of its UTF-8). */
export function stableId(prefix, key) {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(key)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `${prefix}_${hash.toString(16).padStart(16, '0')}`;
}

/** The error kind a host read failed with (`not-found`, `refused`, `wrong-kind`, ...). */
function readErrorOf(error) {
  return error?.payload ?? error?.val ?? error;
}

/** A folder's entries in one host call; none when it is gone or cannot be read. */
function entries(path) {
  try {
    return readFolder(path);
  } catch (error) {
    const kind = readErrorOf(error);
    if (kind !== 'not-found') log('warn', `cannot list ${path}: ${kind}`);
    return [];
  }
}

/**
 * The files under `root` whose names `keep` takes, as `{rel, path, size, modifiedMs}`: folder
 * by folder, each folder's files in name order before its subfolders'. Hidden files and
 * folders (a leading dot) are left out unless `hidden`; links are not followed.
 */
export function* walk(root, keep = () => true, { hidden = false } = {}) {
  const stack = [''];
  while (stack.length > 0) {
    const relDir = stack.pop();
    const folder = relDir ? `${root}/${relDir}` : root;
    const found = entries(folder).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subfolders = [];
    for (const entry of found) {
      if (entry.name.startsWith('.') && !hidden) continue;
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.kind === 'folder') subfolders.push(rel);
      else if (entry.kind === 'file' && keep(entry.name)) yield fileOf(root, rel, entry);
    }
    stack.push(...subfolders.reverse());
  }
}

function fileOf(root, rel, entry) {
  return {
    rel,
    path: `${root}/${rel}`,
    size: Number(entry.sizeBytes),
    modifiedMs: entry.modifiedNs === undefined ? 0 : Number(entry.modifiedNs / 1000000n),
  };
}

/** The first `maxBytes` of a file and its whole size (`[Uint8Array, number]`), in one host
 * call; a `not-found` error when it is gone. */
export function readStart(path, maxBytes) {
  try {
    const [data, size] = readFileStart(path, maxBytes);
    return [data, Number(size)];
  } catch (error) {
    const kind = readErrorOf(error);
    return fail(kind === 'not-found' ? 'not-found' : 'other', `${path}: ${kind}`);
  }
}

/** At most `maxBytes` of a file from `offset` and its whole size: what `readFile` answers (a
 * file's first `MAX_READ` bytes at most). */
export function readRange(path, offset, maxBytes) {
  const start = Number(offset);
  const [data, size] = readStart(path, Math.min(start + maxBytes, MAX_READ));
  return [data.slice(start, start + maxBytes), size];
}

/**
 * The host's change hints under `root` as `[rel, file or null when gone]`, or `undefined` when
 * one names a folder (the paths alone cannot tell what left it: list again).
 */
export function changedFiles(paths, root) {
  const prefix = `${root.replace(/\/$/, '')}/`;
  const found = [];
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue;
    const rel = path.slice(prefix.length);
    const cut = path.lastIndexOf('/');
    const entry = entries(path.slice(0, cut)).find((e) => e.name === path.slice(cut + 1));
    if (!entry) found.push([rel, null]);
    else if (entry.kind === 'folder') return undefined;
    else found.push([rel, fileOf(root, rel, entry)]);
  }
  return found;
}

/** The text the host's OCR reads in a gray image (`pixels`: a `Uint8Array`, one byte a pixel,
 * rows from the top; 0 is black): `{ text, lines, confidence, ... }`; what `readScans` answers
 * for a page. Throws the host's `ocr-error` when it cannot. */
export function recognizeText(width, height, pixels) {
  return hostRecognizeText({ width, height, pixels });
}

/** A listing batch: the documents listed, those gone, where the next batch starts. */
export function batch(upserts, { deletes = [], checkpoint = '', more = false } = {}) {
  return { upserts, deletes, checkpoint, more, coverage: 'full' };
}

/** The answer to change hints: the documents at the paths, and those gone. */
export function changes(upserts, deletes) {
  return { upserts, deletes, checkpoint: '', more: false, coverage: 'changes' };
}

/** The connector `source` export for `impl`, the calls it leaves out answered as above. */
export function connector(impl) {
  const source = {
    async fetchContents(docs) {
      const results = [];
      for (const doc of docs) {
        try {
          results.push({ tag: 'ok', val: await source.fetchContent(doc) });
        } catch (error) {
          results.push({ tag: 'err', val: error?.tag ? error : connectorError('other', String(error)) });
        }
      }
      return results;
    },
    async listChanges(_paths) {
      return undefined;
    },
    async readScans(_doc, _pages) {
      return fail('other', 'this connector has no images to read');
    },
    async watch(_checkpoint, _maxWaitMs) {
      return 'unsupported';
    },
    async validateConfig(_entries) {},
    ...impl,
  };
  return source;
}
