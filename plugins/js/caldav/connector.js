// Quarry connector for calendars and address books on a CalDAV/CardDAV server (Nextcloud,
// Fastmail, iCloud, Radicale, Xandikos, Baïkal), written in JavaScript at quarry:connector@0.5.0.
//
// Finds every calendar and address book of the user (RFC 4791, RFC 6352: from the principal
// or a home set, or the one collection the URL names) and indexes each event, task and contact
// as a document: an event by its summary, with its description, place, people and times (a
// recurring one at its next occurrence), a contact by its name, with organisation, emails,
// phones and notes. A resync asks each collection for its sync token (RFC 6578) or ctag first
// and reads only the collections that changed, and of those only what changed
// (`sync-collection`). The shared pieces, a DAV client and iCalendar/vCard reading, are the
// JavaScript SDK's (`../sdk`).

import { config, log, progress } from 'quarry:connector/host@0.5.0';
import { DavClient, hrefPath, originOf, resolveHref, escapeXml } from '../sdk/dav.js';
import { parseCalendar, timezones, dateOf, nextOccurrence, isoOf } from '../sdk/ical.js';
import { connectorError } from '../sdk/errors.js';

/** Documents per listing batch. */
const BATCH = 500;
/** Seconds between two looks of `watch` at the collections' tokens. */
const POLL_SECONDS = 15;
/** Checkpoints are at most this long (the WIT's limit is 4096 bytes). */
const MAX_CHECKPOINT = 4000;

const ITEM_PROPS = {
  calendar: '<d:getetag/><c:calendar-data/>',
  addressbook: '<d:getetag/><card:address-data/>',
};

function settings(entries = config()) {
  const s = Object.fromEntries(entries);
  const url = (s.url ?? '').trim();
  if (!/^https?:\/\/[^/]/i.test(url)) {
    throw connectorError('invalid-config', '`url`: give the server\'s address (https://HOST/...), your principal or a calendar');
  }
  const host = originOf(url).replace(/^[a-z]+:\/\//, '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  if (/^http:/i.test(url) && !loopback) {
    throw connectorError(
      'invalid-config',
      '`url`: http:// would send the password and your calendar readable across the network; use https:// (with `ca_file` for a server with its own certificate authority)',
    );
  }
  return { url, dav: new DavClient(s.username ?? '', s.password ?? '') };
}

/** A short stable hash of `text`, 32 hex digits (two FNV-1a 64 runs), for document ids. */
function hash(text) {
  let out = '';
  for (const seed of [0xcbf29ce484222325n, 0x84222325cbf29ce4n]) {
    let h = seed;
    for (const byte of new TextEncoder().encode(text)) {
      h ^= BigInt(byte);
      h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
    }
    out += h.toString(16).padStart(16, '0');
  }
  return out;
}

/** Every calendar and address book the URL leads to: [{ href, kind, name, state }]. */
async function discover({ url, dav }) {
  const props =
    '<d:resourcetype/><d:displayname/><d:current-user-principal/><c:calendar-home-set/>' +
    '<card:addressbook-home-set/><d:sync-token/><cs:getctag/>';
  const here = (await dav.propfind(url, 0, props)).entries[0];
  if (!here) throw connectorError('invalid-config', `\`url\` ${url}: the server describes nothing there`);
  const own = collectionOf(url, here);
  if (own) return [own];
  let homes = homeSets(url, here);
  const principal = here.props.get('current-user-principal')?.hrefs[0];
  if (homes.length === 0 && principal) {
    const found = (await dav.propfind(resolveHref(url, principal), 0, props)).entries[0];
    if (found) homes = homeSets(url, found);
  }
  if (homes.length === 0) homes = [url];
  const collections = new Map();
  for (const home of [...new Set(homes)]) {
    for (const entry of (await dav.propfind(home, 1, props)).entries) {
      const collection = collectionOf(home, entry);
      if (collection) collections.set(collection.href, collection);
    }
  }
  return [...collections.values()].sort((a, b) => (a.href < b.href ? -1 : 1));
}

function homeSets(base, entry) {
  return ['calendar-home-set', 'addressbook-home-set'].flatMap((name) =>
    (entry.props.get(name)?.hrefs ?? []).map((h) => resolveHref(base, h)),
  );
}

/** The collection `entry` describes, if it is a calendar or an address book. */
function collectionOf(base, entry) {
  const kind = entry.hasType('calendar') ? 'calendar' : entry.hasType('addressbook') ? 'addressbook' : null;
  if (!kind) return null;
  const href = resolveHref(base, entry.href || base);
  const token = entry.text('sync-token');
  const ctag = entry.text('getctag');
  const state = token ? `t:${token}` : ctag ? `c:${ctag}` : '';
  const name = entry.text('displayname') || decodeURIComponent(hrefPath(href).replace(/\/$/, '').split('/').pop() || kind);
  return { href, kind, name, token, state };
}

// --- documents ------------------------------------------------------------------------------

/** The document and text of calendar object or vCard `data` at `href` in `collection`. */
function documentOf(collection, href, etag, data) {
  const made = collection.kind === 'calendar' ? eventOf(data) : contactOf(data);
  const locator = hrefPath(href);
  const meta = {
    id: `cd${hash(locator)}`,
    locator,
    title: made.title,
    path: collection.name,
    url: href,
    mimeType: collection.kind === 'calendar' ? 'text/calendar' : 'text/vcard',
    sizeBytes: BigInt(new TextEncoder().encode(data).length),
    updateTimeMs: BigInt(Math.round(made.time)),
    version: etag ? `e:${etag}` : `h:${hash(data)}`,
    hasText: true,
  };
  const metadata = [[collection.kind === 'calendar' ? 'calendar' : 'address_book', collection.name], ...made.metadata];
  return { meta, content: { text: made.text, pageStarts: [], metadata } };
}

function person(prop) {
  if (!prop) return '';
  const email = prop.value.replace(/^mailto:/i, '');
  return prop.params.CN ? `${prop.params.CN} <${email}>` : email;
}

/** An event's or task's title, text, time and facts. */
function eventOf(data) {
  const root = parseCalendar(data);
  const zones = timezones(root);
  const items = [...root.all('VEVENT'), ...root.all('VTODO'), ...root.all('VJOURNAL')];
  const item = items.find((c) => !c.prop('RECURRENCE-ID')) ?? items[0];
  if (!item) return { title: '(empty calendar object)', text: '', time: 0, metadata: [] };
  const kind = { VEVENT: 'event', VTODO: 'task', VJOURNAL: 'journal' }[item.name];
  const title = item.value('SUMMARY') || `(${kind} without a title)`;
  const start = dateOf(item.prop('DTSTART'), zones) ?? dateOf(item.prop('DUE'), zones);
  const end = dateOf(item.prop('DTEND'), zones) ?? dateOf(item.prop('DUE'), zones);
  const next = start ? nextOccurrence(item, start.ms, Date.now(), zones) : null;
  const shift = next !== null && start ? next - start.ms : 0;
  const when = [];
  const metadata = [['kind', kind]];
  if (start) {
    when.push(isoOf(start.ms + shift, start.allDay));
    metadata.push(['start', isoOf(start.ms + shift, start.allDay)]);
  }
  if (end) {
    when.push(isoOf(end.ms + shift, end.allDay));
    metadata.push(['end', isoOf(end.ms + shift, end.allDay)]);
  }
  const location = item.value('LOCATION');
  const organizer = person(item.prop('ORGANIZER'));
  const attendees = item.props.filter((p) => p.name === 'ATTENDEE').map(person);
  const rule = item.value('RRULE');
  for (const [key, value] of [
    ['location', location],
    ['organizer', organizer],
    ['attendees', attendees.join(', ')],
    ['recurrence', rule],
    ['status', item.value('STATUS')],
  ]) {
    if (value) metadata.push([key, value]);
  }
  const lines = [title];
  if (when.length) lines.push(`When: ${when.join(' to ')}${rule ? ` (repeats: ${rule})` : ''}`);
  if (location) lines.push(`Where: ${location}`);
  if (organizer) lines.push(`Organizer: ${organizer}`);
  if (attendees.length) lines.push(`Attendees: ${attendees.join(', ')}`);
  const categories = item.values('CATEGORIES').join(', ');
  if (categories) lines.push(`Categories: ${categories}`);
  const description = item.value('DESCRIPTION');
  const text = description ? `${lines.join('\n')}\n\n${description}` : lines.join('\n');
  const changed = dateOf(item.prop('LAST-MODIFIED'), zones) ?? dateOf(item.prop('DTSTAMP'), zones);
  return { title, text, time: next ?? changed?.ms ?? 0, metadata };
}

/** A contact's name, text and facts. */
function contactOf(data) {
  const card = parseCalendar(data).all('VCARD')[0];
  if (!card) return { title: '(empty vCard)', text: '', time: 0, metadata: [] };
  const structuredName = card.value('N').split(';').filter(Boolean);
  const organisation = card.value('ORG').split(';').filter(Boolean).join(', ');
  const emails = card.values('EMAIL');
  const phones = card.values('TEL').map((t) => t.replace(/^tel:/i, ''));
  const title =
    card.value('FN') ||
    [structuredName[1], structuredName[0]].filter(Boolean).join(' ') ||
    organisation ||
    emails[0] ||
    '(contact without a name)';
  const addresses = card.values('ADR').map((a) => a.split(';').filter(Boolean).join(', '));
  const lines = [title];
  const metadata = [['kind', 'contact']];
  for (const [label, key, value] of [
    ['Organisation', 'organisation', organisation],
    ['Title', 'job_title', card.value('TITLE')],
    ['Email', 'emails', emails.join(', ')],
    ['Phone', 'phones', phones.join(', ')],
    ['Address', 'addresses', addresses.join('; ')],
    ['Birthday', 'birthday', card.value('BDAY')],
    ['Web', 'web', card.values('URL').join(', ')],
  ]) {
    if (value) {
      lines.push(`${label}: ${value}`);
      metadata.push([key, value]);
    }
  }
  const note = card.value('NOTE');
  const text = note ? `${lines.join('\n')}\n\n${note}` : lines.join('\n');
  const revision = dateOf({ value: card.value('REV').replace(/[-:]/g, '').replace(/\.\d+/, ''), params: {} }, new Map());
  return { title, text, time: revision?.ms ?? 0, metadata };
}

// --- listings -------------------------------------------------------------------------------

/** The texts of the documents this instance listed, by locator (a later fetch in the same
 * instance needs no request; a fresh instance asks the server). */
const texts = new Map();
/** The listing this instance is paging through: { from, upserts, deletes, states, mode }. */
let paging = null;

function readCheckpoint(text) {
  try {
    const parsed = JSON.parse(text || '{}');
    return { states: parsed.s ?? null, page: parsed.p ?? 0, from: parsed.f ?? null };
  } catch {
    return { states: null, page: 0, from: null };
  }
}

function writeCheckpoint(value) {
  const text = JSON.stringify(value);
  return text.length <= MAX_CHECKPOINT ? text : JSON.stringify({ ...value, s: null });
}

/** Every item of `collection`, as documents. */
async function readWhole(dav, collection) {
  const [report, filter] =
    collection.kind === 'calendar'
      ? ['c:calendar-query', '<c:filter><c:comp-filter name="VCALENDAR"/></c:filter>']
      : ['card:addressbook-query', ''];
  const answer = await dav.report(
    collection.href,
    1,
    `<${report}><d:prop>${ITEM_PROPS[collection.kind]}</d:prop>${filter}</${report}>`,
  );
  return answer.entries
    .filter((e) => hrefPath(resolveHref(collection.href, e.href)) !== hrefPath(collection.href))
    .map((e) => itemDocument(collection, e))
    .filter(Boolean);
}

function itemDocument(collection, entry) {
  const data = entry.text('calendar-data') || entry.text('address-data');
  if (!data) return null;
  const doc = documentOf(collection, resolveHref(collection.href, entry.href), entry.etag(), data);
  texts.set(doc.meta.locator, doc.content);
  return doc.meta;
}

/** What changed in `collection` since its `token`: { upserts, deletes }, or null when only a
 * whole reading can tell (no sync-collection, or a token the server forgot). */
async function readChanges(dav, collection, token) {
  const answer = await dav.syncCollection(collection.href, token, ITEM_PROPS[collection.kind]);
  if (!answer) return null;
  const upserts = [];
  const deletes = [];
  const withoutData = [];
  for (const entry of answer.entries) {
    const href = resolveHref(collection.href, entry.href);
    if (hrefPath(href) === hrefPath(collection.href)) continue;
    if (entry.isGone()) {
      deletes.push(`cd${hash(hrefPath(href))}`);
      continue;
    }
    const doc = itemDocument(collection, entry);
    if (doc) upserts.push(doc);
    else withoutData.push(hrefPath(href));
  }
  // A server that answers sync-collection with ETags only: the data by a multiget.
  if (withoutData.length > 0) {
    const report = collection.kind === 'calendar' ? 'c:calendar-multiget' : 'card:addressbook-multiget';
    const hrefs = withoutData.map((h) => `<d:href>${escapeXml(h)}</d:href>`).join('');
    const got = await dav.report(collection.href, 1, `<${report}><d:prop>${ITEM_PROPS[collection.kind]}</d:prop>${hrefs}</${report}>`);
    for (const entry of got.entries) {
      const doc = itemDocument(collection, entry);
      if (doc) upserts.push(doc);
    }
  }
  return { upserts, deletes };
}

/** A whole new listing (coverage `changes` when every collection can tell what changed since
 * `states`, else `full`), and the states it leaves. */
async function makeListing(s, states) {
  const collections = await discover(s);
  const known = states ?? {};
  const same =
    states !== null &&
    Object.keys(known).length === collections.length &&
    collections.every((c) => c.href in known);
  const next = Object.fromEntries(collections.map((c) => [c.href, c.state]));
  if (same) {
    const upserts = [];
    const deletes = [];
    let whole = false;
    for (const c of collections) {
      if (c.state && c.state === known[c.href]) continue;
      const old = known[c.href];
      const changes = old?.startsWith('t:') ? await readChanges(s.dav, c, old.slice(2)) : null;
      if (!changes) {
        whole = true;
        break;
      }
      upserts.push(...changes.upserts);
      deletes.push(...changes.deletes);
    }
    if (!whole) return { mode: 'changes', upserts, deletes, states: next };
  }
  const upserts = [];
  for (const [n, c] of collections.entries()) {
    progress(`reading ${c.name}`, BigInt(n), BigInt(collections.length));
    upserts.push(...(await readWhole(s.dav, c)));
  }
  return { mode: 'full', upserts, deletes: [], states: next };
}

export const source = {
  async listDocs(checkpoint) {
    const s = settings();
    const at = readCheckpoint(checkpoint);
    // A page of a listing under way: from this instance's, or the same listing made again.
    const from = at.from !== null ? at.from : checkpoint ?? '';
    if (!paging || paging.from !== from || at.page === 0) {
      texts.clear();
      paging = { from, ...(await makeListing(s, readCheckpoint(from).states)) };
    }
    const page = at.page;
    const upserts = paging.upserts.slice(page * BATCH, (page + 1) * BATCH);
    const more = (page + 1) * BATCH < paging.upserts.length;
    const batch = {
      upserts,
      deletes: page === 0 ? paging.deletes : [],
      checkpoint: more ? writeCheckpoint({ f: from, p: page + 1 }) : writeCheckpoint({ s: paging.states }),
      more,
      coverage: paging.mode,
    };
    if (!more) paging = null;
    log('debug', `listed ${upserts.length} items (${batch.coverage})`);
    return batch;
  },

  async fetchContent(doc) {
    const [answer] = await fetchAll([doc]);
    if (answer.tag === 'err') throw answer.val;
    return answer.val;
  },

  async fetchContents(docs) {
    return fetchAll(docs);
  },

  async readFile(doc, offset, maxBytes) {
    const s = settings();
    const { bytes } = await s.dav.get(originOf(s.url) + doc.locator);
    const start = Number(offset);
    return { data: bytes.slice(start, start + maxBytes), totalSize: BigInt(bytes.length) };
  },

  async listChanges(_paths) {
    return undefined;
  },

  async readScans(_doc, _pages) {
    throw connectorError('other', 'calendars and contacts have no scans to read');
  },

  async watch(checkpoint, maxWaitMs) {
    const { states } = readCheckpoint(checkpoint);
    const wait = Math.min(maxWaitMs, POLL_SECONDS * 1000);
    await new Promise((resolve) => setTimeout(resolve, wait));
    if (!states) return 'quiet';
    const now = await discover(settings());
    const same =
      Object.keys(states).length === now.length && now.every((c) => c.state && states[c.href] === c.state);
    return same ? 'quiet' : 'changed';
  },

  async validateConfig(entries) {
    const found = await discover(settings(entries));
    if (found.length === 0) {
      throw connectorError(
        'invalid-config',
        '`url`: no calendar or address book found there; give your principal (Nextcloud: https://HOST/remote.php/dav/) or a calendar\'s address',
      );
    }
  },
};

/** The texts of `docs`: from this instance's listing, else by multiget from the server. */
async function fetchAll(docs) {
  const s = settings();
  const missing = docs.filter((d) => !texts.has(d.locator));
  if (missing.length > 0) await multiget(s, missing);
  return docs.map((d) => {
    const content = texts.get(d.locator);
    texts.delete(d.locator);
    return content
      ? { tag: 'ok', val: content }
      : { tag: 'err', val: connectorError('not-found', `${d.locator} is no longer on the server`) };
  });
}

/** Reads `docs` from the server, a REPORT per collection (calendar- or addressbook-multiget). */
async function multiget(s, docs) {
  const byCollection = new Map();
  for (const d of docs) {
    const parent = d.locator.replace(/[^/]+$/, '');
    byCollection.set(parent, [...(byCollection.get(parent) ?? []), d.locator]);
  }
  for (const [parent, locators] of byCollection) {
    const href = originOf(s.url) + parent;
    const hrefs = locators.map((l) => `<d:href>${escapeXml(l)}</d:href>`).join('');
    // The collection's kind is not in the locator: a calendar is asked first, then an address
    // book (a server refuses a report its collection does not have).
    for (const kind of ['calendar', 'addressbook']) {
      const report = kind === 'calendar' ? 'c:calendar-multiget' : 'card:addressbook-multiget';
      let answer;
      try {
        answer = await s.dav.report(href, 1, `<${report}><d:prop>${ITEM_PROPS[kind]}</d:prop>${hrefs}</${report}>`);
      } catch (error) {
        if (kind === 'addressbook') throw error;
        continue;
      }
      const collection = { href, kind, name: decodeURIComponent(parent.replace(/\/$/, '').split('/').pop() || kind) };
      const found = answer.entries.filter((e) => e.text('calendar-data') || e.text('address-data'));
      for (const entry of found) itemDocument(collection, entry);
      if (found.length > 0) break;
    }
  }
}
