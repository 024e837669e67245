// WebDAV (RFC 4918) for JavaScript connectors: PROPFIND and REPORT over `fetch`, whose
// requests the host lets reach only the hosts the user granted, their multistatus answers read
// into entries, and RFC 6578 `sync-collection`. CalDAV (RFC 4791) and CardDAV (RFC 6352) are
// WebDAV with reports of their own. The same client as the Rust SDK's `quarry_sdk::dav`.
//
//   import { DavClient } from '../sdk/dav.js';
//   const dav = new DavClient('alice', 'secret');
//   const answer = await dav.propfind(url, 1, '<d:getetag/><d:resourcetype/>');
//   for (const entry of answer.entries) { if (entry.hasType('calendar')) ... }
//
// Property names in requests use the prefixes `d` (DAV:), `c` (CalDAV), `card` (CardDAV) and
// `cs` (http://calendarserver.org/ns/); answers are read by the elements' local names.

import { connectorError } from './errors.js';

const NAMESPACES =
  'xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" ' +
  'xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/"';

/** Largest answer read, in bytes (as the Rust SDK's). */
export const MAX_BODY_BYTES = 32 << 20;

/** One `response` of a multistatus answer. */
export class DavEntry {
  constructor() {
    /** The resource's href, as the server wrote it. */
    this.href = '';
    /** The response's own status (404 for a member sync-collection reports gone), or null. */
    this.status = null;
    /** Properties found (status 200), by local name: { text, elements, hrefs }. */
    this.props = new Map();
  }

  /** The text of property `name`, or '' when not found. */
  text(name) {
    return this.props.get(name)?.text ?? '';
  }

  /** Whether its resourcetype holds an element of local name `kind`. */
  hasType(kind) {
    return this.props.get('resourcetype')?.elements.includes(kind) ?? false;
  }

  /** Its getetag without quotes and a weak validator's W/. */
  etag() {
    return this.text('getetag').replace(/^W\//, '').replace(/^"|"$/g, '');
  }

  /** Whether sync-collection reports it gone. */
  isGone() {
    return this.status === 404;
  }
}

/** The code of a status line (`HTTP/1.1 404 Not Found`). */
function statusCode(line) {
  const code = Number(line.trim().split(/\s+/)[1]);
  return Number.isFinite(code) ? code : null;
}

const ENTITIES = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML character data with its references resolved (only XML's own and numeric ones). */
export function unescapeXml(text) {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref) => {
    if (ref.startsWith('#x')) return safeChar(parseInt(ref.slice(2), 16), whole);
    if (ref.startsWith('#')) return safeChar(parseInt(ref.slice(1), 10), whole);
    return ENTITIES[ref] ?? whole;
  });
}

function safeChar(code, fallback) {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback;
}

/** XML's five escapes. */
export function escapeXml(text) {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/**
 * Reads a multistatus answer: { entries: DavEntry[], syncToken: string|null }. Anything that
 * is not one (an HTML login page, a cut answer) throws `unavailable`, naming `url`.
 */
export function parseMultistatus(url, xml) {
  const garbage = (why) =>
    connectorError(
      'unavailable',
      `${url}: the server's answer is not a WebDAV multistatus (${why}); Quarry tries again later`,
    );
  const path = [];
  const done = { entries: [], syncToken: null };
  let sawMultistatus = false;
  let entry = new DavEntry();
  let propstat = [];
  let propstatStatus = null;
  let prop = null;
  let text = '';
  const tag = /<(\/?)([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!\[CDATA\[([\s\S]*?)\]\]>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>/g;
  let at = 0;
  const addText = (t) => {
    text += t;
    if (prop) prop.text += t;
  };
  const open = (name) => {
    if (path.length === 0 && name === 'multistatus') sawMultistatus = true;
    if (path.length === 4 && path[3] === 'prop') {
      prop = { name, text: '', elements: [], hrefs: [] };
    } else if (prop) {
      prop.elements.push(name);
    }
    text = '';
    path.push(name);
  };
  const close = (name) => {
    if (path.length === 0 || path[path.length - 1] !== name) throw garbage(`</${name}> closes nothing open`);
    path.pop();
    const parent = path[path.length - 1];
    const depth = path.length;
    const value = text.trim();
    text = '';
    if (depth === 1 && name === 'response') {
      done.entries.push(entry);
      entry = new DavEntry();
    } else if (depth === 1 && name === 'sync-token') {
      done.syncToken = value;
    } else if (depth === 2 && name === 'href' && parent === 'response') {
      entry.href = value;
    } else if (depth === 2 && name === 'status' && parent === 'response') {
      entry.status = statusCode(value);
    } else if (depth === 3 && name === 'status' && parent === 'propstat') {
      propstatStatus = statusCode(value);
    } else if (depth === 2 && name === 'propstat') {
      if (propstatStatus === null || propstatStatus === 200) {
        for (const p of propstat) entry.props.set(p.name, p);
      }
      propstat = [];
      propstatStatus = null;
    } else if (depth === 4 && parent === 'prop') {
      if (prop) {
        prop.text = prop.text.trim();
        propstat.push(prop);
        prop = null;
      }
    } else if (depth > 4 && name === 'href' && prop) {
      prop.hrefs.push(value);
    }
  };
  for (let m = tag.exec(xml); m !== null; m = tag.exec(xml)) {
    const between = xml.slice(at, m.index);
    if (between.includes('<')) throw garbage('a tag cannot be read');
    addText(unescapeXml(between));
    at = tag.lastIndex;
    if (m[6] !== undefined) {
      addText(m[6]);
    } else if (m[3] !== undefined) {
      const [, closing, , name, , selfClosing] = m;
      if (closing) {
        close(name);
      } else {
        open(name);
        if (selfClosing) close(name);
      }
    }
  }
  if (xml.slice(at).trim().length > 0) throw garbage('it ends in the middle of a tag');
  if (!sawMultistatus) throw garbage('no multistatus element');
  if (path.length > 0) throw garbage('it ends before its elements do');
  return done;
}

/** Base64 of a string's UTF-8 bytes. */
function base64(text) {
  const bytes = new TextEncoder().encode(text);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    for (let k = 0; k < 4; k++) {
      out += k <= ((bytes.length - i) * 4) / 3 ? alphabet[(n >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

/** The scheme, host and port of a URL, lowercased. */
export function originOf(url) {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)/i.exec(url);
  return m ? m[1].toLowerCase() : '';
}

/** The path of an href (a path, or a URL whose path it takes), without query or fragment. */
export function hrefPath(href) {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?/i.exec(href);
  const path = m ? m[1] ?? '/' : href;
  return path.split(/[?#]/)[0];
}

/** `href` resolved against `base` (an absolute URL): a URL, or a path from the root. */
export function resolveHref(base, href) {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(href)) return href;
  if (href.startsWith('/')) return originOf(base) + href;
  return base.replace(/[^/]*$/, '') + href;
}

/** The connector error an HTTP `status` of `url` stands for, naming the fix. */
export function statusError(url, status) {
  if (status === 401) {
    return connectorError(
      'invalid-config',
      `${url}: the server refused the user name and password (401 Unauthorized): check \`username\` and \`password\` (an app password where the service asks for one)`,
    );
  }
  if (status === 403) {
    return connectorError('invalid-config', `${url}: the server forbids this user to read it (403 Forbidden)`);
  }
  if (status === 404 || status === 410) {
    return connectorError('not-found', `${url}: not found on the server (${status})`);
  }
  if (status === 408 || status === 429 || status >= 500) {
    return connectorError('unavailable', `${url}: the server answered ${status}; Quarry tries again later`);
  }
  return connectorError('other', `${url}: the server answered ${status}`);
}

/** The connector error of a request that got no answer (refused, unreachable, bad TLS). */
function fetchError(url, error) {
  const why = String(error?.message ?? error);
  if (/certificate|tls/i.test(why)) {
    return connectorError(
      'unavailable',
      `${originOf(url)}: the server's TLS certificate did not verify; if a private certificate authority signed it, give that authority's PEM file in the connector's certificate setting (\`ca_file\`)`,
    );
  }
  return connectorError('unavailable', `${originOf(url)}: ${why}`);
}

/** A DAV client with the user's credentials (HTTP Basic, to the request's own origin). */
export class DavClient {
  constructor(username, password) {
    this.authorization = username ? `Basic ${base64(`${username}:${password ?? ''}`)}` : null;
  }

  /** Sends a request; answers { status, text } or throws the connector error of a failure. */
  async send(method, url, headers = {}, body = undefined) {
    const all = { ...headers };
    if (this.authorization) all.authorization = this.authorization;
    let response;
    try {
      // Redirects are followed by hand: credentials go only to the first origin.
      response = await fetch(url, { method, headers: all, body, redirect: 'manual' });
    } catch (error) {
      throw fetchError(url, error);
    }
    if ([301, 302, 307, 308].includes(response.status) && response.headers.get('location')) {
      const next = resolveHref(url, response.headers.get('location'));
      if (originOf(next) === originOf(url)) return this.send(method, next, headers, body);
      throw connectorError('other', `${url}: the server sends this request to another host (${originOf(next)})`);
    }
    const text = await response.text();
    if (text.length > MAX_BODY_BYTES) {
      throw connectorError('other', `${url}: the answer is larger than ${MAX_BODY_BYTES >> 20} MiB`);
    }
    return { status: response.status, text };
  }

  async multistatus(method, url, depth, body) {
    const { status, text } = await this.send(
      method,
      url,
      { depth: String(depth), 'content-type': 'application/xml; charset=utf-8' },
      body,
    );
    if (status < 200 || status > 299) throw statusError(url, status);
    if (status !== 207) {
      throw connectorError(
        'unavailable',
        `${url}: ${method} answered ${status} instead of a multistatus (207): is this a WebDAV address?`,
      );
    }
    return parseMultistatus(url, text);
  }

  /** PROPFIND of `props` (elements such as `<d:getetag/>`) at `url` to `depth` (0 or 1). */
  propfind(url, depth, props) {
    const body = `<?xml version="1.0" encoding="utf-8"?><d:propfind ${NAMESPACES}><d:prop>${props}</d:prop></d:propfind>`;
    return this.multistatus('PROPFIND', url, depth, body);
  }

  /** REPORT at `url` to `depth`: `element` is the report's root, declarations added. */
  report(url, depth, element) {
    const body = `<?xml version="1.0" encoding="utf-8"?>${element.replace(/^<([\w:-]+)/, `<$1 ${NAMESPACES}`)}`;
    return this.multistatus('REPORT', url, depth, body);
  }

  /**
   * RFC 6578 sync-collection of the collection at `url` since `token` ('' for every member):
   * its multistatus, or null when the server no longer knows the token or has no such report.
   */
  async syncCollection(url, token, props) {
    const body =
      `<?xml version="1.0" encoding="utf-8"?><d:sync-collection ${NAMESPACES}>` +
      `<d:sync-token>${escapeXml(token)}</d:sync-token><d:sync-level>1</d:sync-level>` +
      `<d:prop>${props}</d:prop></d:sync-collection>`;
    const { status, text } = await this.send(
      'REPORT',
      url,
      { depth: '0', 'content-type': 'application/xml; charset=utf-8' },
      body,
    );
    if ([400, 403, 405, 409, 415, 501].includes(status)) return null;
    if (status < 200 || status > 299) throw statusError(url, status);
    return parseMultistatus(url, text);
  }

  /** GET of `url`: { status, text, bytes }, failed unless 2xx. */
  async get(url, headers = {}) {
    const all = { ...headers };
    if (this.authorization) all.authorization = this.authorization;
    let response;
    try {
      response = await fetch(url, { headers: all, redirect: 'manual' });
    } catch (error) {
      throw fetchError(url, error);
    }
    if (response.status < 200 || response.status > 299) throw statusError(url, response.status);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, bytes };
  }
}
