// Quarry connector for JSON records over HTTP, written in JavaScript.
//
// Fetches a URL that answers with JSON (an array of records, or an object holding one) or
// JSON Lines (one record per line), and indexes each record as a document: a title, a text made
// of the chosen fields, a link and a date. Works with exports of notes and bookmarks apps, REST
// APIs and datasets. Built into a WebAssembly component with componentize-js; the host calls
// `source` below through quarry:connector@0.5.0, and lets `fetch` reach only the URL's host.
// The texts of many records are answered in one call from one download (`fetchContents`); the
// SDK (`../sdk/connector.js`) answers the calls a JSON source has no use for.
import { config, log } from 'quarry:connector/host@0.5.0';
import { batch, connector, fail, progress } from '../sdk/connector.js';

/** The connector's settings, with the manifest's defaults filled in by the host. */
function settings(entries = config()) {
  const s = Object.fromEntries(entries);
  return {
    url: s.url,
    items: s.items || '',
    idField: s.id_field || 'id',
    titleField: s.title_field || 'title',
    textFields: (s.text_fields || '').split(',').map((f) => f.trim()).filter(Boolean),
    urlField: s.url_field || '',
    updatedField: s.updated_field || '',
    token: s.token || '',
  };
}

/** A field of a record by dotted path (`author.name`). */
function pick(record, path) {
  let value = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = value[key];
  }
  return value;
}

function asText(value) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(asText).filter(Boolean).join(', ');
  if (typeof value === 'object') return Object.values(value).map(asText).filter(Boolean).join('\n');
  return String(value);
}

/** A stable id from any key: FNV-1a (64 bits, as two halves), URL-safe. */
function stableId(prefix, key) {
  let h1 = 0x811c9dc5, h2 = 0x01000193;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return prefix + h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0');
}

// The records this instance fetched, by URL, so that the fetch-content calls following a listing
// in the same instance do not download the source again. Never relied on: a fresh instance fetches.
let fetched = null;

async function fetchRecords(s) {
  const headers = { accept: 'application/json, application/x-ndjson, */*;q=0.5' };
  if (s.token) headers.authorization = `Bearer ${s.token}`;
  let response;
  try {
    response = await fetch(s.url, { headers });
  } catch (e) {
    fail('unavailable', `cannot reach ${s.url}: ${e}`);
  }
  if (response.status === 401 || response.status === 403) {
    fail('invalid-config', `the server answered HTTP ${response.status}: check the token`);
  }
  if (!response.ok) fail('unavailable', `the server answered HTTP ${response.status}`);
  const body = await response.text();
  let records;
  try {
    const data = JSON.parse(body);
    records = s.items ? pick(data, s.items) : data;
  } catch {
    // Not one JSON value: JSON Lines, one record per non-empty line.
    records = [];
    body.split('\n').forEach((line, n) => {
      if (!line.trim()) return;
      try {
        records.push(JSON.parse(line));
      } catch {
        fail('other', `line ${n + 1} is not JSON`);
      }
    });
  }
  if (!Array.isArray(records)) {
    fail('invalid-config', s.items
      ? `items: "${s.items}" does not name an array in the answer`
      : 'the answer is not an array of records; set "items" to the path of the array (like data.items)');
  }
  return records.filter((r) => r !== null && typeof r === 'object');
}

function keyOf(s, record, n) {
  const id = pick(record, s.idField);
  return id === undefined || id === null || id === '' ? `#${n}` : String(id);
}

function textOf(s, record) {
  const fields = s.textFields.length ? s.textFields : Object.keys(record).filter((k) => k !== s.idField);
  return fields
    .map((f) => asText(pick(record, f)))
    .filter(Boolean)
    .join('\n\n');
}

function dateOf(s, record) {
  if (!s.updatedField) return 0n;
  const value = pick(record, s.updatedField);
  const ms = typeof value === 'number' ? (value < 1e11 ? value * 1000 : value) : Date.parse(String(value));
  return Number.isFinite(ms) ? BigInt(Math.trunc(ms)) : 0n;
}

function meta(s, record, n) {
  const key = keyOf(s, record, n);
  const text = textOf(s, record);
  const title = asText(pick(record, s.titleField)).trim() || `Record ${key}`;
  const link = s.urlField ? asText(pick(record, s.urlField)) : '';
  return {
    id: stableId('r_', key),
    locator: key.length <= 4096 ? key : stableId('k_', key),
    title: title.slice(0, 1000),
    path: undefined,
    url: link || undefined,
    mimeType: 'application/json',
    sizeBytes: BigInt(JSON.stringify(record).length),
    updateTimeMs: dateOf(s, record),
    version: stableId('v_', JSON.stringify(record)),
    hasText: text.length > 0,
  };
}

/** The records of the source, by locator: this instance's copy, or a fresh one. */
async function byLocator(s, fresh) {
  if (fresh || !fetched || fetched.url !== s.url) {
    const records = await fetchRecords(s);
    const index = new Map();
    records.forEach((r, n) => {
      const key = keyOf(s, r, n);
      index.set(key.length <= 4096 ? key : stableId('k_', key), r);
    });
    fetched = { url: s.url, records, index };
  }
  return fetched;
}

async function find(s, locator) {
  let record = (await byLocator(s, false)).index.get(locator);
  if (record === undefined) record = (await byLocator(s, true)).index.get(locator);
  if (record === undefined) fail('not-found', `the answer no longer has record ${locator}`);
  return record;
}

function contentOf(s, record) {
  const title = asText(pick(record, s.titleField));
  return { text: [title, textOf(s, record)].filter(Boolean).join('\n\n'), pageStarts: [], metadata: [] };
}

export const source = connector({
  async listDocs(_checkpoint) {
    const s = settings();
    const { records } = await byLocator(s, true);
    progress('listing records', records.length, records.length);
    log('debug', `${records.length} records from ${s.url}`);
    return batch(records.map((r, n) => meta(s, r, n)));
  },

  async fetchContent(doc) {
    const s = settings();
    return contentOf(s, await find(s, doc.locator));
  },

  async fetchContents(docs) {
    // One download answers them all: the listing's, or a fresh one for records it lacks.
    const s = settings();
    const results = [];
    for (const doc of docs) {
      try {
        results.push({ tag: 'ok', val: contentOf(s, await find(s, doc.locator)) });
      } catch (error) {
        results.push({ tag: 'err', val: error });
      }
    }
    return results;
  },

  async readFile(doc, offset, maxBytes) {
    const record = await find(settings(), doc.locator);
    const bytes = new TextEncoder().encode(JSON.stringify(record, null, 2));
    const start = Number(offset);
    return { data: bytes.slice(start, start + maxBytes), totalSize: BigInt(bytes.length) };
  },

  async validateConfig(entries) {
    const s = settings(entries);
    if (!s.url) fail('invalid-config', 'url: give the address of the JSON');
    await fetchRecords(s);
  },
});
