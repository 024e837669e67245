// iCalendar (RFC 5545) and vCard (RFC 6350) for JavaScript connectors: the text read into
// components and properties, dates and times to milliseconds (with the VTIMEZONE offsets the
// object carries), and a recurring event's next occurrence.
//
//   import { parseCalendar, eventTimes } from '../sdk/ical.js';
//   const root = parseCalendar(text);
//   for (const event of root.all('VEVENT')) { event.value('SUMMARY') ... }

/** A component (VCALENDAR, VEVENT, VCARD...) with its properties and the components inside. */
export class Component {
  constructor(name) {
    this.name = name;
    /** [{ name, params: {NAME: value}, value }] in order. */
    this.props = [];
    this.children = [];
  }

  /** The first property `name`, or undefined. */
  prop(name) {
    return this.props.find((p) => p.name === name);
  }

  /** The value of the first property `name` as text, or ''. */
  value(name) {
    return this.prop(name)?.value ?? '';
  }

  /** The values of every property `name`. */
  values(name) {
    return this.props.filter((p) => p.name === name).map((p) => p.value);
  }

  /** Every component named `name` at any depth below. */
  all(name) {
    const found = [];
    for (const child of this.children) {
      if (child.name === name) found.push(child);
      found.push(...child.all(name));
    }
    return found;
  }
}

/** A TEXT value with its escapes resolved. */
function unescapeText(value) {
  return value.replace(/\\([nN,;\\])/g, (_, c) => (c === 'n' || c === 'N' ? '\n' : c));
}

/** Splits a content line into name, parameters and value (quoted parameter values kept). */
function contentLine(line) {
  let i = 0;
  let inQuotes = false;
  for (; i < line.length; i++) {
    const c = line[i];
    if (c === '"') inQuotes = !inQuotes;
    else if (c === ':' && !inQuotes) break;
  }
  const head = line.slice(0, i);
  const value = line.slice(i + 1);
  const parts = head.match(/(?:[^;"]|"[^"]*")+/g) ?? [''];
  const name = parts[0].toUpperCase().replace(/^.*\./, ''); // a vCard group (item1.EMAIL) dropped
  const params = {};
  for (const part of parts.slice(1)) {
    const eq = part.indexOf('=');
    if (eq < 0) {
      params.TYPE = params.TYPE ? `${params.TYPE},${part}` : part; // vCard 2.1 bare types
    } else {
      params[part.slice(0, eq).toUpperCase()] = part.slice(eq + 1).replace(/^"|"$/g, '');
    }
  }
  return { name, params, value };
}

/**
 * Reads iCalendar or vCard text into a root component holding what it holds (VCALENDAR, or
 * one VCARD per card). Lines it cannot read are skipped; an END without its BEGIN is ignored.
 */
export function parseCalendar(text) {
  const root = new Component('');
  const stack = [root];
  const unfolded = text.replace(/\r?\n[ \t]/g, '');
  for (const raw of unfolded.split(/\r?\n/)) {
    if (!raw.trim()) continue;
    const line = contentLine(raw);
    if (line.name === 'BEGIN') {
      const component = new Component(line.value.trim().toUpperCase());
      stack[stack.length - 1].children.push(component);
      stack.push(component);
    } else if (line.name === 'END') {
      const name = line.value.trim().toUpperCase();
      if (stack.length > 1 && stack[stack.length - 1].name === name) stack.pop();
    } else if (stack.length > 1) {
      const binary = line.params.ENCODING === 'b' || line.params.ENCODING === 'BASE64';
      stack[stack.length - 1].props.push({
        name: line.name,
        params: line.params,
        value: binary ? '' : unescapeText(line.value),
      });
    }
  }
  return root;
}

/** Days since 1970-01-01 of a proleptic Gregorian date. */
function daysFromCivil(y, m, d) {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Seconds of a UTC offset (`+0100`, `-0530`). */
function offsetSeconds(text) {
  const m = /^([+-])(\d\d)(\d\d)(\d\d)?$/.exec(text.trim());
  if (!m) return 0;
  const s = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  return m[1] === '-' ? -s : s;
}

/**
 * The UTC offsets of the VTIMEZONEs in `root`, by TZID: a function of the local month giving
 * seconds east of UTC. Daylight time is told by month (from the months its rules start in),
 * so a time in the week of a switch may be an hour off.
 */
export function timezones(root) {
  const zones = new Map();
  for (const zone of root.all('VTIMEZONE')) {
    const id = zone.value('TZID');
    const part = (name) => zone.children.find((c) => c.name === name);
    const month = (c) => Number(/BYMONTH=(\d+)/.exec(c?.value('RRULE') ?? '')?.[1] ?? 0);
    const standard = part('STANDARD');
    const daylight = part('DAYLIGHT');
    const std = offsetSeconds(standard?.value('TZOFFSETTO') ?? daylight?.value('TZOFFSETTO') ?? '+0000');
    const dst = daylight ? offsetSeconds(daylight.value('TZOFFSETTO')) : std;
    const [from, to] = [month(daylight), month(standard)];
    zones.set(id, (m) => {
      if (!daylight || !from || !to) return std;
      const inDaylight = from < to ? m >= from && m < to : m >= from || m < to;
      return inDaylight ? dst : std;
    });
  }
  return zones;
}

/**
 * A DATE or DATE-TIME property as { ms, allDay } (UTC milliseconds), or null when it cannot
 * be read. A time with a TZID takes the zone's offset; a floating time is read as UTC.
 */
export function dateOf(prop, zones) {
  if (!prop) return null;
  const m = /^(\d{4})(\d\d)(\d\d)(?:T(\d\d)(\d\d)(\d\d)(Z)?)?$/.exec(prop.value.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = daysFromCivil(y, mo, d);
  if (m[4] === undefined) return { ms: days * 86400000, allDay: true };
  let seconds = days * 86400 + Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]);
  if (!m[7] && prop.params.TZID) {
    const zone = zones.get(prop.params.TZID);
    if (zone) seconds -= zone(mo);
  }
  return { ms: seconds * 1000, allDay: false };
}

/** The UTC date and time of `ms` as parts. */
function partsOf(ms) {
  const date = new Date(ms);
  return {
    y: date.getUTCFullYear(),
    m: date.getUTCMonth() + 1,
    d: date.getUTCDate(),
    time: ms - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()),
  };
}

const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/** Occurrences of a recurring event looked at, at most, for its next one. */
const MAX_OCCURRENCES = 100000;

/**
 * The start of the first occurrence of `event` at or after `now` (milliseconds), given its
 * first start: its RRULE (FREQ DAILY, WEEKLY with BYDAY, MONTHLY, YEARLY; INTERVAL, COUNT,
 * UNTIL) and EXDATEs. A series that has ended answers its last occurrence; an event without
 * a rule, its start.
 */
export function nextOccurrence(event, start, now, zones) {
  const rule = event.value('RRULE');
  if (!rule) return start;
  const parts = Object.fromEntries(
    rule.split(';').map((p) => p.split('=')).map(([k, v]) => [k.toUpperCase(), v ?? '']),
  );
  const interval = Math.max(1, Number(parts.INTERVAL) || 1);
  const count = parts.COUNT ? Number(parts.COUNT) : Infinity;
  const until = parts.UNTIL ? dateOf({ value: parts.UNTIL, params: {} }, zones)?.ms ?? Infinity : Infinity;
  const excluded = new Set(
    event.props
      .filter((p) => p.name === 'EXDATE')
      .flatMap((p) => p.value.split(',').map((v) => dateOf({ value: v, params: p.params }, zones)?.ms)),
  );
  const first = partsOf(start);
  const byDay = (parts.BYDAY ?? '')
    .split(',')
    .map((d) => WEEKDAYS.indexOf(d.replace(/^[+-]?\d+/, '')))
    .filter((d) => d >= 0);
  let last = start;
  let seen = 0;
  for (let step = 0; step < MAX_OCCURRENCES && seen < count; step++) {
    for (const at of periodStarts(parts.FREQ, first, step * interval, byDay, start)) {
      if (at > until || seen >= count) return last;
      seen += 1;
      if (excluded.has(at)) continue;
      last = at;
      if (at >= now) return at;
    }
  }
  return last;
}

/** The occurrences of period `n` (counted in FREQ units from the first start), in order. */
function periodStarts(freq, first, n, byDay, start) {
  const dayMs = 86400000;
  const firstDay = daysFromCivil(first.y, first.m, first.d);
  switch (freq) {
    case 'DAILY':
      return [start + n * dayMs];
    case 'WEEKLY': {
      if (byDay.length === 0) return [start + n * 7 * dayMs];
      const weekStart = firstDay - (((firstDay + 4) % 7) + 7) % 7 + n * 7; // that week's Sunday
      return byDay
        .map((wd) => (weekStart + wd) * dayMs + first.time)
        .filter((at) => at >= start)
        .sort((a, b) => a - b);
    }
    case 'MONTHLY': {
      const months = first.m - 1 + n;
      const [y, m] = [first.y + Math.floor(months / 12), (months % 12) + 1];
      const day = daysFromCivil(y, m, first.d);
      return partsOf(day * dayMs).d === first.d ? [day * dayMs + first.time] : [];
    }
    case 'YEARLY': {
      const day = daysFromCivil(first.y + n, first.m, first.d);
      return partsOf(day * dayMs).m === first.m ? [day * dayMs + first.time] : [];
    }
    default:
      return n === 0 ? [start] : [];
  }
}

/** `ms` as an ISO 8601 text: a date for an all-day time, else UTC to the second. */
export function isoOf(ms, allDay) {
  const text = new Date(ms).toISOString();
  return allDay ? text.slice(0, 10) : `${text.slice(0, 19)}Z`;
}
