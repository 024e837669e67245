// Quarry's search page: plain JavaScript over the admin API (/admin/v1), no framework and no
// build step. /search answers as one types; /search/docs/{connector_id}/{doc_id}?q=&page= is
// one document, page by page, the query's words marked (where search results' `link`s lead).
// Text from documents is only ever put in the page as text nodes, never as HTML. common.js
// (loaded first) gives `api`, `el`, `showError` and `$`.
"use strict";

/** Results per page of results. */
const PAGE_SIZE = 20;
/** How long typing must pause before the search runs, in milliseconds. */
const DEBOUNCE_MS = 150;

// --- helpers ---------------------------------------------------------------------------------

/** `text` as nodes, the ranges (character offsets, in code points) marked. */
function marked(text, ranges) {
  const chars = Array.from(text);
  const out = [];
  let at = 0;
  for (const { start, end } of ranges) {
    if (start < at || end <= start || end > chars.length) continue;
    if (start > at) out.push(document.createTextNode(chars.slice(at, start).join("")));
    out.push(el("mark", {}, chars.slice(start, end).join("")));
    at = end;
  }
  if (at < chars.length) out.push(document.createTextNode(chars.slice(at).join("")));
  return out;
}

function when(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = -1;
  do { value /= 1024; unit += 1; } while (value >= 1024 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The path and query of a result's `link` (its host is the service's public address). */
function localLink(link) {
  try {
    const url = new URL(link);
    return url.pathname + url.search;
  } catch {
    return "/search";
  }
}

// --- results ---------------------------------------------------------------------------------

const search = { seq: 0, offset: 0, total: 0, timer: null, startedAt: 0 };

/** The form's state as URL parameters (so reloading, or coming back, shows the same search). */
function formParams() {
  const params = new URLSearchParams();
  const fields = { q: $("#q").value, mode: $("#mode").value, connector: $("#connector").value,
    type: $("#type").value, time: $("#time").value, sort: $("#sort").value, as: $("#see-as").value };
  for (const [name, value] of Object.entries(fields)) {
    if (value && !(name === "mode" && value === "semantic") && !(name === "sort" && value === "relevance")) params.set(name, value);
  }
  if (search.offset > 0) params.set("offset", String(search.offset));
  return params;
}

function restoreForm(params) {
  $("#q").value = params.get("q") || "";
  for (const [name, id] of [["as", "#see-as"], ["mode", "#mode"], ["connector", "#connector"],
    ["type", "#type"], ["time", "#time"], ["sort", "#sort"]]) {
    const value = params.get(name);
    if (value !== null && [...$(id).options].some((o) => o.value === value)) $(id).value = value;
    if (id === "#see-as") fillConnectors();
  }
  search.offset = Math.max(0, Number.parseInt(params.get("offset") || "0", 10) || 0);
}

/** The admin API's search body for the form. */
function searchBody(query) {
  const body = { query, limit: PAGE_SIZE, offset: search.offset, semantic_search: $("#mode").value === "semantic" };
  if ($("#connector").value) body.connector_names_filter = [$("#connector").value];
  if ($("#type").value) body.file_extensions_filter = $("#type").value.split(",");
  if ($("#time").value) {
    const from = new Date(Date.now() - Number($("#time").value) * 86400000);
    body.update_time_filter = { from: from.toISOString().replace(/\.\d+Z$/, "Z") };
  }
  if ($("#sort").value !== "relevance") {
    body.sort_by = "update_time";
    body.sort_order = $("#sort").value === "oldest" ? "ascending" : "descending";
  }
  if ($("#see-as").value) body.see_as = $("#see-as").value;
  return body;
}

function scheduleSearch(resetOffset = true) {
  if (resetOffset) search.offset = 0;
  clearTimeout(search.timer);
  search.timer = setTimeout(runSearch, DEBOUNCE_MS);
}

async function runSearch() {
  const query = $("#q").value.trim();
  const seq = ++search.seq;
  search.startedAt = performance.now();
  history.replaceState(null, "", `/search${formParams().toString() ? `?${formParams()}` : ""}`);
  showSeeAsNote();
  if (!query) {
    $("#results").replaceChildren();
    $("#summary").textContent = "";
    $("#warnings").hidden = true;
    $("#pager").hidden = true;
    showError("#search-error", null);
    document.body.dataset.searchSeq = String(seq);
    return;
  }
  document.body.dataset.searching = "true";
  try {
    const answer = await api("POST", "/admin/v1/search", searchBody(query));
    if (seq !== search.seq) return; // a newer search is on its way
    showError("#search-error", null);
    renderResults(answer, query);
  } catch (e) {
    if (seq !== search.seq) return;
    $("#results").replaceChildren();
    $("#summary").textContent = "";
    $("#pager").hidden = true;
    showError("#search-error", e);
  } finally {
    // Once the next frame is drawn, the page notes how long this search took on screen.
    if (seq === search.seq) {
      requestAnimationFrame(() => {
        if (seq !== search.seq) return;
        document.body.dataset.searchMs = String(Math.round(performance.now() - search.startedAt));
        document.body.dataset.searching = "false";
        document.body.dataset.searchSeq = String(seq);
      });
    }
  }
}

function renderResults(answer, query) {
  search.total = answer.total;
  const shown = answer.results.length;
  const how = answer.mode === "semantic" ? "by meaning and words" : "by words";
  const who = answer.see_as ? ` as ${answer.see_as.name} sees them` : "";
  $("#summary").textContent = shown === 0
    ? `Nothing found for “${query}”${who}. Try other words or fewer filters.`
    : `${answer.total} found ${how}${who}; showing ${search.offset + 1}–${search.offset + shown} (${answer.took_ms} ms).`;
  const warnings = $("#warnings");
  warnings.replaceChildren(...answer.warnings.map((w) => el("li", {}, w)));
  warnings.hidden = answer.warnings.length === 0;
  $("#results").replaceChildren(...answer.results.map((r) => resultItem(r)));
  $("#pager").hidden = search.offset === 0 && search.offset + shown >= answer.total;
  $("#prev-results").disabled = search.offset === 0;
  $("#next-results").disabled = search.offset + shown >= answer.total;
  const pages = Math.max(1, Math.ceil(answer.total / PAGE_SIZE));
  $("#pager-position").textContent = `Page ${Math.floor(search.offset / PAGE_SIZE) + 1} of ${pages}`;
}

/** The width a result's preview is drawn at (shown at half, for sharp screens). */
const THUMB_WIDTH = 240;
/** The width the document view draws a page at (it is shown at most 50rem wide). */
const PAGE_WIDTH = 1000;

/**
 * A small picture of a PDF's cited page, or of an image, drawn by the service's page renderer;
 * fetched only when it scrolls into view, and gone when the document has none (a file that is
 * not served, a renderer that gave up).
 */
/** Slide decks: their cards show the cited slide's text page. */
const SLIDES = ["application/vnd.openxmlformats-officedocument.presentationml.presentation",
  "application/vnd.oasis.opendocument.presentation"];

function thumbnail(r) {
  const mime = r.mime_type || "";
  if (mime !== "application/pdf" && !mime.startsWith("image/") && !SLIDES.includes(mime)) return null;
  const ids = `${encodeURIComponent(r.connector_id)}/docs/${encodeURIComponent(r.doc_id)}`;
  const src = `/admin/v1/connectors/${ids}/pages/${r.page || 1}/preview?width=${THUMB_WIDTH}`;
  return el("img", { class: "thumb", src, alt: "", loading: "lazy", onerror: (e) => e.target.remove() });
}

function resultItem(r) {
  const meta = [r.connector_name, when(r.update_time)];
  if (r.page !== null && r.page !== undefined) meta.push(`page ${r.page}`);
  return el("li", { class: "result", dataset: { docId: r.doc_id, connectorId: r.connector_id } },
    thumbnail(r),
    el("a", { class: "result-title", href: localLink(r.link) }, r.title || r.path || r.doc_id),
    r.path ? el("div", { class: "path" }, r.path) : null,
    el("div", { class: "result-meta" }, meta.join(" · ")),
    r.snippet ? el("p", { class: "snippet" }, marked(r.snippet, r.highlights)) : null);
}

function resultLinks() {
  return [...document.querySelectorAll("#results a.result-title")];
}

function showSeeAsNote() {
  const select = $("#see-as");
  const note = $("#see-as-note");
  if (!select.value) {
    note.hidden = true;
    return;
  }
  const name = select.options[select.selectedIndex].textContent;
  note.textContent = `Showing what ${name} sees: its data sharing applies. These searches do not count against its quota and are logged as yours.`;
  note.hidden = false;
}

const choices = { connectors: [], integrations: [] };

async function loadChoices() {
  const [connectors, integrations] = await Promise.all([
    api("GET", "/admin/v1/connectors"),
    api("GET", "/admin/v1/integrations"),
  ]);
  choices.connectors = connectors.connectors.map((c) => c.name).sort((a, b) => a.localeCompare(b));
  choices.integrations = integrations.integrations;
  $("#see-as").append(...choices.integrations.map((i) => el("option", { value: i.integration_id }, i.name)));
  fillConnectors();
}

/** The connector choices: every connector, or those the integration chosen in "See as" sees
 * (a choice it does not see is cleared). */
function fillConnectors() {
  const select = $("#connector");
  const chosen = select.value;
  const as = choices.integrations.find((i) => i.integration_id === $("#see-as").value);
  let names = choices.connectors;
  if (as && as.sharing.mode === "selected") names = (as.sharing.connectors || []).map((c) => c.name);
  else if (as && as.sharing.mode === "declined") names = [];
  select.replaceChildren(el("option", { value: "" }, "All connectors"),
    ...names.map((name) => el("option", { value: name }, name)));
  select.value = names.includes(chosen) ? chosen : "";
}

async function startResults() {
  $("#results-view").hidden = false;
  try {
    await loadChoices();
  } catch (e) {
    showError("#search-error", e);
  }
  restoreForm(new URLSearchParams(window.location.search));
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(search.timer);
    search.offset = 0;
    runSearch();
  });
  $("#q").addEventListener("input", () => scheduleSearch());
  for (const id of ["#mode", "#connector", "#type", "#time", "#sort", "#see-as"]) {
    $(id).addEventListener("change", () => scheduleSearch());
  }
  $("#see-as").addEventListener("change", fillConnectors);
  $("#prev-results").addEventListener("click", () => {
    search.offset = Math.max(0, search.offset - PAGE_SIZE);
    runSearch();
  });
  $("#next-results").addEventListener("click", () => {
    search.offset += PAGE_SIZE;
    runSearch();
  });
  document.addEventListener("keydown", resultKeys);
  document.body.dataset.ready = "true";
  if ($("#q").value.trim()) runSearch();
  $("#q").focus();
}

/** Up and down move through the results, Enter opens one (the link's own), Escape goes back to
 * the search box, or clears it. */
function resultKeys(event) {
  const links = resultLinks();
  const at = links.indexOf(document.activeElement);
  const inBox = document.activeElement === $("#q");
  if (event.key === "ArrowDown" && (inBox || at >= 0) && links.length > 0) {
    event.preventDefault();
    links[Math.min(at + 1, links.length - 1)].focus();
  } else if (event.key === "ArrowUp" && at >= 0) {
    event.preventDefault();
    if (at === 0) $("#q").focus();
    else links[at - 1].focus();
  } else if (event.key === "Escape") {
    if (inBox && $("#q").value) {
      $("#q").value = "";
      scheduleSearch();
    } else {
      $("#q").focus();
    }
  }
}

// --- one document ----------------------------------------------------------------------------

const doc = { connector: "", id: "", page: 1, pages: 1, query: "" };

function docUrl() {
  const params = new URLSearchParams();
  if (doc.query) params.set("q", doc.query);
  params.set("page", String(doc.page));
  return `/search/docs/${doc.connector}/${doc.id}?${params}`;
}

async function showPage(page) {
  doc.page = page;
  document.body.dataset.docReady = "false";
  const params = new URLSearchParams({ page: String(page) });
  if (doc.query) params.set("q", doc.query);
  let d = null;
  try {
    d = await api("GET", `/admin/v1/connectors/${doc.connector}/docs/${doc.id}?${params}`);
    showError("#doc-error", null);
    renderDocument(d);
  } catch (e) {
    showError("#doc-error", e);
  }
  history.replaceState(null, "", docUrl());
  // The page's picture comes after its text, which is readable meanwhile.
  if (d) await showPicture(d);
  document.body.dataset.docReady = "true";
}

function renderDocument(d) {
  doc.pages = d.page_count;
  document.title = `${d.title} · Quarry`;
  $("#doc-title").textContent = d.title || d.path || d.doc_id;
  $("#doc-path").textContent = d.path || "";
  const meta = [["Connector", d.connector_name || d.connector_id], ["Type", d.mime_type],
    ["Size", size(d.size_bytes)], ["Updated", when(d.update_time)], ["Pages", String(d.page_count)]];
  for (const [name, value] of Object.entries(d.metadata || {})) {
    if (name !== "page_count") meta.push([name.replaceAll("_", " "), value]);
  }
  if (d.url) meta.push(["In its application", d.url]);
  $("#doc-meta").replaceChildren(...meta.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]));
  $("#page-position").textContent = `Page ${d.page_start} of ${d.page_count}`;
  $("#prev-page").disabled = d.page_start <= 1;
  $("#next-page").disabled = d.page_start >= d.page_count;
  $("#doc-truncated").hidden = !d.truncated;
  $("#download").hidden = !d.file_served;
  $("#no-file").hidden = d.file_served;
  const text = $("#doc-text");
  text.replaceChildren(...marked(d.content, d.marks));
  text.dataset.page = String(d.page_start);
  const first = text.querySelector("mark");
  if (first) first.scrollIntoView({ block: "center" });
  else window.scrollTo(0, 0);
}

/** Page `d.page_start` of a PDF file or an image, drawn, with the query's words boxed on it. */
async function showPicture(d) {
  const figure = $("#doc-page");
  figure.hidden = true;
  figure.replaceChildren();
  const mime = d.mime_type || "";
  if (!d.file_served || (mime !== "application/pdf" && !mime.startsWith("image/"))) return;
  const params = new URLSearchParams({ width: String(PAGE_WIDTH) });
  if (doc.query) params.set("q", doc.query);
  const ids = `${encodeURIComponent(doc.connector)}/docs/${encodeURIComponent(doc.id)}`;
  const response = await fetch(`/admin/v1/connectors/${ids}/pages/${d.page_start}/preview?${params}`, {
    headers: { Accept: "application/json" }, credentials: "same-origin",
  }).catch(() => null);
  // No picture (a page that cannot be drawn, or the page turned meanwhile): the text stands alone.
  if (!response || !response.ok || doc.page !== d.page_start) return;
  const p = await response.json();
  const picture = el("img", { src: `data:${p.mime_type};base64,${p.image}`, alt: `Page ${p.page}, as drawn` });
  const marks = p.highlights.map((b) => {
    const mark = el("span", { class: "page-mark" });
    Object.assign(mark.style, {
      left: `${(100 * b.x) / p.width}%`, top: `${(100 * b.y) / p.height}%`,
      width: `${(100 * b.w) / p.width}%`, height: `${(100 * b.h) / p.height}%`,
    });
    return mark;
  });
  figure.replaceChildren(picture, ...marks);
  figure.dataset.marks = String(marks.length);
  figure.hidden = false;
  await picture.decode().catch(() => {});
  // The picture came in above the text: the first mark is brought into view again, on the page.
  const first = marks[0] || $("#doc-text mark");
  if (first) first.scrollIntoView({ block: "center" });
}

function startDocument(connector, id) {
  const params = new URLSearchParams(window.location.search);
  Object.assign(doc, { connector, id, query: params.get("q") || "" });
  $("#doc-view").hidden = false;
  $("#results-view").hidden = true;
  $("#download").href = `/admin/v1/connectors/${connector}/docs/${id}/file`;
  const back = doc.query ? `/search?${new URLSearchParams({ q: doc.query })}` : "/search";
  $("#back-to-results").href = back;
  $("#back-to-results").addEventListener("click", (event) => {
    // Back to the very search this document was opened from, when it was.
    if (document.referrer && new URL(document.referrer).origin === window.location.origin
      && new URL(document.referrer).pathname === "/search") {
      event.preventDefault();
      history.back();
    }
  });
  $("#prev-page").addEventListener("click", () => doc.page > 1 && showPage(doc.page - 1));
  $("#next-page").addEventListener("click", () => doc.page < doc.pages && showPage(doc.page + 1));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === "ArrowLeft" && doc.page > 1) showPage(doc.page - 1);
    else if (event.key === "ArrowRight" && doc.page < doc.pages) showPage(doc.page + 1);
    else if (event.key === "Escape") $("#back-to-results").click();
  });
  const page = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  document.body.dataset.ready = "true";
  showPage(page);
}

// --- start -----------------------------------------------------------------------------------

const route = window.location.pathname.match(/^\/search\/docs\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)$/);
if (route) startDocument(route[1], route[2]);
else startResults();
