// Quarry's settings page: plain JavaScript over the admin API (/admin/v1), through common.js
// (loaded first: `api`, which sends the session's CSRF token, `el`, `showError`, `$`).
"use strict";

const baseUrl = document.querySelector('meta[name="base-url"]').content;

const state = { integrations: [], connectors: [], plugins: [], stageId: null, pollTimer: null, held: null };

// --- helpers ---------------------------------------------------------------------------------

let toastTimer = null;
function toast(message) {
  const node = $("#toast");
  node.textContent = message;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 3500);
}

async function copyText(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    // Without the async clipboard (a page not on localhost or https), copy through a selection.
    const area = el("textarea", { class: "offscreen", readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    if (!copied) { toast(`Could not copy ${what}: select it and copy by hand.`); return; }
  }
  toast(`${what} copied to the clipboard.`);
}

function when(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function quotaText(quota) {
  return quota === "unlimited" ? "unlimited" : Number(quota).toLocaleString();
}

function sharingText(sharing) {
  if (sharing.mode === "all") return "All connectors";
  if (sharing.mode === "declined") return "Declined";
  const names = sharing.connectors.map((c) => c.name);
  return names.length ? names.join(", ") : "None (the chosen connectors were removed)";
}

// Small questions in a dialog; resolves true on OK.
function ask(title, text, { okLabel = "OK", quota = null, danger = false } = {}) {
  const dialog = $("#ask-dialog");
  $("#ask-title").textContent = title;
  $("#ask-text").textContent = text;
  $("#ask-ok").textContent = okLabel;
  $("#ask-ok").classList.toggle("danger", danger);
  $("#ask-quota").hidden = quota === null;
  if (quota !== null) {
    $("#ask-quota-unlimited").checked = quota === "unlimited";
    $("#ask-quota-number").value = quota === "unlimited" ? "" : quota;
  }
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

// --- tabs --------------------------------------------------------------------------------------

function showTab() {
  const name = (window.location.hash || "#integrations").slice(1);
  const known = ["integrations", "connectors", "activity"].includes(name) ? name : "integrations";
  for (const section of document.querySelectorAll("section.tab")) section.hidden = section.id !== known;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.tab === known) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (known === "activity") loadActivity().catch((e) => toast(e.message));
  pollConnectors();
}

// --- integrations ----------------------------------------------------------------------------

async function loadIntegrations() {
  const data = await api("GET", "/admin/v1/integrations");
  state.integrations = data.integrations;
  renderIntegrations();
  fillActivityFilters();
}

function renderIntegrations() {
  const body = $("#integration-table tbody");
  body.replaceChildren();
  for (const i of state.integrations) {
    const used = `${i.requests_this_month.toLocaleString()} of ${quotaText(i.monthly_quota)}`;
    const keyNote = i.active_keys === 0 ? el("span", { class: "badge muted" }, "no active key") : null;
    body.append(el("tr", { dataset: { name: i.name, id: i.integration_id } },
      el("td", {}, el("strong", {}, i.name), " ", keyNote),
      el("td", {}, when(i.created)),
      el("td", {}, when(i.last_used)),
      el("td", {}, used),
      el("td", { class: i.sharing.mode === "declined" ? "declined" : "" }, sharingText(i.sharing)),
      el("td", { class: "actions" },
        el("button", { type: "button", dataset: { action: "docs" }, onclick: () => showDocs(i) }, "Docs"),
        el("button", { type: "button", dataset: { action: "sharing" }, onclick: () => changeSharing(i) }, "Sharing"),
        el("button", { type: "button", dataset: { action: "quota" }, onclick: () => changeQuota(i) }, "Quota"),
        el("button", { type: "button", dataset: { action: "rotate" }, onclick: () => rotate(i) }, "Rotate key"),
        el("button", { type: "button", class: "danger", dataset: { action: "revoke" }, onclick: () => revoke(i) }, "Revoke"))));
  }
  $("#no-integrations").hidden = state.integrations.length > 0;
}

// The data sharing prompt; resolves to {mode, connectors?} or null when cancelled.
async function sharingPrompt(name, current) {
  await loadConnectors();
  const dialog = $("#sharing-dialog");
  $("#sharing-question").textContent =
    `Which of your data may “${name}” search and read? You can change this later.`;
  const chosen = current && current.mode === "selected" ? current.connectors.map((c) => c.connector_id) : [];
  const list = $("#sharing-connectors");
  list.replaceChildren(...state.connectors.map((c) =>
    el("label", { class: "check" },
      el("input", { type: "checkbox", value: c.connector_id, checked: chosen.includes(c.connector_id) }),
      ` ${c.name}`)));
  if (!state.connectors.length) list.append(el("p", { class: "hint" }, "No connectors yet."));
  const mode = current ? current.mode : "all";
  for (const radio of dialog.querySelectorAll('input[name="sharing"]')) radio.checked = radio.value === mode;
  showError("#sharing-error", null);
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    const form = $("#sharing-form");
    const onSubmit = (event) => {
      if (event.submitter && event.submitter.value === "cancel") return;
      const picked = form.querySelector('input[name="sharing"]:checked').value;
      if (picked === "selected") {
        const ids = [...list.querySelectorAll("input:checked")].map((box) => box.value);
        if (!ids.length) {
          event.preventDefault();
          showError("#sharing-error", new Error("Tick at least one connector, or choose Decline."));
          return;
        }
      }
    };
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("close", () => {
      form.removeEventListener("submit", onSubmit);
      if (dialog.returnValue !== "ok") { resolve(null); return; }
      const picked = form.querySelector('input[name="sharing"]:checked').value;
      if (picked === "selected") {
        resolve({ mode: "selected", connectors: [...list.querySelectorAll("input:checked")].map((b) => b.value) });
      } else {
        resolve({ mode: picked });
      }
    }, { once: true });
  });
}

function showCreated(title, data) {
  $("#created-title").textContent = title;
  $("#api-key").value = data.api_key;
  $("#docs").textContent = data.docs;
  $("#docs").dataset.mcp = JSON.stringify(data.mcp_config, null, 2);
  $("#created").hidden = false;
  $("#created").scrollIntoView({ block: "start" });
  $("#copy-key").focus();
}

function clearCreated() {
  $("#api-key").value = "";
  $("#docs").textContent = "";
  delete $("#docs").dataset.mcp;
  $("#created").hidden = true;
}

async function createIntegration(event) {
  event.preventDefault();
  showError("#create-error", null);
  const name = $("#integration-name").value.trim();
  if (!name) {
    showError("#create-error", new Error("Enter a name for the integration, e.g. the agent that will use it."));
    $("#integration-name").focus();
    return;
  }
  if (state.integrations.some((i) => i.name.toLowerCase() === name.toLowerCase())) {
    showError("#create-error", new Error(`An integration named “${name}” exists already; choose another name.`));
    $("#integration-name").focus();
    return;
  }
  const sharing = await sharingPrompt(name, null);
  if (!sharing) return;
  try {
    const data = await api("POST", "/admin/v1/integrations", { name, sharing });
    $("#integration-name").value = "";
    showCreated(`“${data.integration.name}” is ready`, data);
    await loadIntegrations();
  } catch (error) {
    showError("#create-error", error);
  }
}

async function showDocs(integration) {
  try {
    const data = await api("GET", `/admin/v1/integrations/${integration.integration_id}/docs`);
    $("#docs-title").textContent = `API documentation: ${integration.name}`;
    $("#docs-text").textContent = data.docs;
    $("#docs-dialog").showModal();
  } catch (error) { toast(error.message); }
}

async function changeSharing(integration) {
  const sharing = await sharingPrompt(integration.name, integration.sharing);
  if (!sharing) return;
  try {
    await api("PUT", `/admin/v1/integrations/${integration.integration_id}/sharing`, { sharing });
    toast(`Data sharing of “${integration.name}” changed; it applies to its next request.`);
    await loadIntegrations();
  } catch (error) { toast(error.message); }
}

async function changeQuota(integration) {
  const ok = await ask(`Monthly quota of “${integration.name}”`,
    "Requests it may make per calendar month (UTC).", { okLabel: "Save", quota: integration.monthly_quota });
  if (!ok) return;
  const quota = $("#ask-quota-unlimited").checked ? "unlimited" : Number($("#ask-quota-number").value);
  if (quota !== "unlimited" && !(Number.isInteger(quota) && quota >= 0)) {
    toast("The quota must be a whole number of requests, or unlimited.");
    return;
  }
  try {
    await api("PUT", `/admin/v1/integrations/${integration.integration_id}/quota`, { quota });
    toast(`Quota of “${integration.name}” saved.`);
    await loadIntegrations();
  } catch (error) { toast(error.message); }
}

async function rotate(integration) {
  const ok = await ask(`Rotate the key of “${integration.name}”?`,
    "The current key stops working at once; the new one is shown once.", { okLabel: "Rotate key" });
  if (!ok) return;
  try {
    const data = await api("POST", `/admin/v1/integrations/${integration.integration_id}/rotate`);
    showCreated(`New key for “${integration.name}”`, data);
    $("#more-options").open = true;
    await loadIntegrations();
  } catch (error) { toast(error.message); }
}

async function revoke(integration) {
  const ok = await ask(`Revoke “${integration.name}”?`,
    "Its key stops working at once; requests get UNAUTHORIZED. Rotate later to give it a new key.",
    { okLabel: "Revoke", danger: true });
  if (!ok) return;
  try {
    await api("POST", `/admin/v1/integrations/${integration.integration_id}/revoke`);
    toast(`“${integration.name}” revoked.`);
    await loadIntegrations();
  } catch (error) { toast(error.message); }
}

// --- connectors ------------------------------------------------------------------------------

async function loadConnectors() {
  const data = await api("GET", "/admin/v1/connectors");
  state.connectors = data.connectors;
  renderConnectors();
  fillActivityFilters();
}

function statusCell(c) {
  const p = c.progress;
  const cell = el("td", { class: "status" }, el("span", { class: `badge ${c.status}` }, c.status));
  if (c.status === "syncing") {
    const total = p.remaining === null ? null : p.listed + p.remaining;
    const bar = el("progress", { max: total || 1, value: total ? p.listed : undefined, "aria-label": `Sync progress of ${c.name}` });
    const counts = `${p.indexed.toLocaleString()} indexed, ${p.listed.toLocaleString()} listed` +
      (p.remaining === null ? "" : `, ${p.remaining.toLocaleString()} to go`) +
      (p.failed ? `, ${p.failed} failed` : "");
    cell.append(bar, el("small", { class: "counts" }, counts));
  } else if (c.last_error) {
    cell.append(el("small", { class: "error-text" }, c.last_error));
  } else if (p.failed) {
    cell.append(el("small", { class: "counts" }, `${p.failed} file(s) could not be read`));
  }
  // Embeddings come after the sync: documents are found by keyword meanwhile.
  const e = c.embedding;
  if (e && e.pending > 0) {
    const embedded = Math.max(c.doc_count - e.pending, 0);
    cell.append(
      el("progress", { max: c.doc_count || 1, value: embedded, "aria-label": `Embedding progress of ${c.name}` }),
      el("small", { class: "counts", dataset: { embedding: "" } },
        `meaning: ${e.pending.toLocaleString()} document(s) waiting for embeddings (found by keyword meanwhile)`));
  }
  // OCR reads images and scanned pages in the background: found by name meanwhile.
  const o = c.ocr;
  if (o && o.pending > 0) {
    cell.append(el("small", { class: "counts", dataset: { ocr: "" } },
      `OCR: ${o.pending.toLocaleString()} document(s) waiting to have their images read (found by name meanwhile)`));
  }
  return cell;
}

function renderConnectors() {
  const body = $("#connector-table tbody");
  body.replaceChildren();
  for (const c of state.connectors) {
    const granted = [...c.granted_folders, ...c.granted_hosts.map((h) => `Network: ${h}`)];
    if (c.left_out && c.left_out.length) granted.push(`left out (Quarry's own): ${c.left_out.join(", ")}`);
    const where = granted.length ? el("small", { class: "path" }, granted.join(", ")) : null;
    const u = c.plugin_usage;
    const cost = el("small", { class: "counts", dataset: { usage: "" } },
      `${u.calls.toLocaleString()} plugin calls, ${(u.cpu_ms / 1000).toFixed(1)} s CPU, peak ${(u.peak_memory_bytes / 1048576).toFixed(1)} MiB`);
    const disabled = c.status === "disabled";
    const credentials = el("small", { class: c.credentials.mode === "off" ? "error-text" : "counts", dataset: { credentials: c.credentials.mode } },
      credentialsText(c), " ",
      el("button", { type: "button", class: "link", dataset: { action: "credentials" }, onclick: () => openHeld(c) },
        c.held_back_count ? `Held back: ${c.held_back_count.toLocaleString()}` : "Credentials…"));
    body.append(el("tr", { dataset: { name: c.name, id: c.connector_id, status: c.status } },
      el("td", {}, el("strong", {}, c.name), where, cost, credentials),
      el("td", {}, c.plugin_name || c.plugin, el("small", {}, c.plugin)),
      statusCell(c),
      el("td", { class: "num" }, c.doc_count.toLocaleString()),
      el("td", {}, when(c.last_sync_time)),
      el("td", { class: "actions" },
        el("button", { type: "button", dataset: { action: "sync" }, disabled, onclick: () => connectorAction(c, "sync", `Sync of “${c.name}” asked for.`) }, "Sync now"),
        disabled
          ? el("button", { type: "button", dataset: { action: "enable" }, onclick: () => connectorAction(c, "enable", `“${c.name}” enabled.`) }, "Enable")
          : el("button", { type: "button", dataset: { action: "disable" }, onclick: () => connectorAction(c, "disable", `“${c.name}” disabled.`) }, "Disable"),
        el("button", { type: "button", class: "danger", dataset: { action: "remove" }, onclick: () => removeConnector(c) }, "Remove"))));
  }
  $("#no-connectors").hidden = state.connectors.length > 0;
}

// --- credentials ------------------------------------------------------------------------------

const MODE_WORDS = {
  hold: "credentials held back",
  redact: "credentials redacted",
  off: "credentials NOT checked",
};
const MODE_WARNINGS = {
  redact: "Redacting indexes the text of files that hold secrets with each secret replaced by a marker and never serves their files; keys, keystores and password exports stay held back. A secret the rules do not know stays in the text.",
  off: "Off indexes private keys, tokens and passwords in this connector's files as they are: every integration it is shared with can find them by search, read them and download the files.",
};

function credentialsText(c) {
  const released = c.credentials.released.length ? `, ${c.credentials.released.length} released` : "";
  return MODE_WORDS[c.credentials.mode] + released + ".";
}

async function openHeld(connector) {
  state.held = connector;
  $("#held-title").textContent = `Credentials in “${connector.name}”`;
  $("#held-mode").value = connector.credentials.mode;
  showModeWarning();
  $("#held-list").replaceChildren();
  $("#held-summary").textContent = "Loading…";
  $("#held-dialog").showModal();
  await loadHeld();
}

async function loadHeld() {
  const c = state.held;
  try {
    const data = await api("GET", `/admin/v1/connectors/${c.connector_id}/held-back`);
    $("#held-summary").textContent = (data.count
      ? `${data.count.toLocaleString()} file(s) held back${data.documents.length < data.count ? ` (the first ${data.documents.length} shown)` : ""}.`
      : "Nothing is held back.") +
      (data.redacted_count ? ` ${data.redacted_count.toLocaleString()} file(s) indexed with their secrets redacted.` : "") +
      (data.unjudged_files.count ? ` ${data.unjudged_files.count.toLocaleString()} file(s) searchable but not served: they could not be checked for credentials.` : "");
    const listed = (d, note) => el("li", { dataset: { path: d.path } },
      el("span", {}, el("code", {}, d.path), " ", el("small", {}, note)),
      el("button", { type: "button", dataset: { action: "release" }, onclick: () => releasePath(d.path, false) }, "Release"));
    $("#held-list").replaceChildren(...data.documents.map((d) => listed(d, d.reason)),
      ...data.unjudged_files.documents.map((d) => listed(d, `file not served: ${d.reason}`)));
    $("#held-released").replaceChildren(...data.credentials.released.map((path) => el("li", {},
      el("code", {}, path),
      el("button", { type: "button", onclick: () => releasePath(path, true) }, "Hold back again"))));
  } catch (error) { $("#held-summary").textContent = error.message; }
}

function showModeWarning() {
  const warning = MODE_WARNINGS[$("#held-mode").value];
  $("#held-warning").textContent = warning || "";
  $("#held-warning").hidden = !warning;
}

async function applyMode() {
  const c = state.held;
  const mode = $("#held-mode").value;
  if (mode === c.credentials.mode) return;
  if (mode === "off") {
    const ok = await ask("Turn the credential check off?", MODE_WARNINGS.off, { okLabel: "Turn off", danger: true });
    if (!ok) { $("#held-mode").value = c.credentials.mode; showModeWarning(); return; }
  }
  try {
    const data = await api("PUT", `/admin/v1/connectors/${c.connector_id}/credentials`, { mode });
    state.held = data.connector;
    toast(`“${c.name}”: ${MODE_WORDS[mode]}; its files are judged again now.`);
    await Promise.all([loadHeld(), loadConnectors()]);
  } catch (error) { toast(error.message); }
}

async function releasePath(path, undo) {
  const c = state.held;
  if (!undo) {
    const ok = await ask(`Release ${path}?`,
      "It is indexed as it is, whatever it holds: every integration this connector is shared with can find, read and download it.",
      { okLabel: "Release", danger: true });
    if (!ok) return;
  }
  try {
    const data = await api("POST", `/admin/v1/connectors/${c.connector_id}/release`, { path, undo });
    state.held = data.connector;
    toast(undo ? `${path} is held back again.` : `${path} released; it is indexed now.`);
    await Promise.all([loadHeld(), loadConnectors()]);
  } catch (error) { toast(error.message); }
}

async function connectorAction(connector, action, done) {
  try {
    await api("POST", `/admin/v1/connectors/${connector.connector_id}/${action}`);
    toast(done);
    await loadConnectors();
    pollConnectors();
  } catch (error) { toast(error.message); }
}

async function removeConnector(connector) {
  const ok = await ask(`Remove “${connector.name}”?`,
    "Its documents leave the index; the source itself is not touched.", { okLabel: "Remove", danger: true });
  if (!ok) return;
  try {
    await api("DELETE", `/admin/v1/connectors/${connector.connector_id}`);
    toast(`“${connector.name}” removed.`);
    await loadConnectors();
  } catch (error) { toast(error.message); }
}

// Live progress: every second while a sync runs, every 5 s otherwise, while the tab shows.
function pollConnectors() {
  clearTimeout(state.pollTimer);
  if ($("#connectors").hidden) return;
  const busy = state.connectors.some((c) => c.status === "syncing" || (c.embedding && c.embedding.pending > 0) || (c.ocr && c.ocr.pending > 0) || c.doc_count === 0 && c.status === "idle" && !c.last_sync_time);
  state.pollTimer = setTimeout(async () => {
    try { await loadConnectors(); } catch (_) { /* shown on the next action */ }
    pollConnectors();
  }, busy ? 1000 : 5000);
}

async function addFolder(event) {
  event.preventDefault();
  showError("#folder-error", null);
  const name = $("#folder-name").value.trim();
  const folder = $("#folder-path").value.trim();
  if (!name || !folder) {
    showError("#folder-error", new Error(!name ? "Enter a name for the connector." : "Enter the folder's full path, e.g. /home/you/Documents."));
    return;
  }
  try {
    const added = await api("POST", "/admin/v1/connectors", { name, plugin: "folder", settings: { folder } });
    $("#folder-name").value = "";
    $("#folder-path").value = "";
    const leftOut = added.connector.left_out || [];
    toast(`“${name}” added; its first sync starts now.` +
      (leftOut.length ? ` Left out: ${leftOut.join(", ")} (Quarry's own, never read).` : ""));
    await loadConnectors();
    pollConnectors();
  } catch (error) { showError("#folder-error", error); }
}

async function loadPlugins() {
  const data = await api("GET", "/admin/v1/plugins");
  state.plugins = data.plugins;
  const select = $("#connector-plugin");
  const previous = select.value;
  select.replaceChildren(...state.plugins.map((p) => el("option", { value: p.id }, `${p.name} ${p.version}`)));
  if (state.plugins.some((p) => p.id === previous)) select.value = previous;
  renderPluginFields();
}

/** Where a plugin came from and how it was verified, in one line. */
function originText(origin) {
  if (origin.source === "bundled") return "Comes with Quarry.";
  const signed = origin.signed_by ? `, signed by ${origin.signed_by}` : "";
  return `From ${origin.source}: ${origin.verified}${signed}.`;
}

function renderPluginFields() {
  const plugin = state.plugins.find((p) => p.id === $("#connector-plugin").value);
  const box = $("#connector-fields");
  box.replaceChildren();
  $("#connector-asks").replaceChildren();
  $("#connector-plugin-about").textContent = plugin ? plugin.description : "No plugins installed.";
  $("#connector-plugin-origin").textContent = plugin && plugin.origin ? originText(plugin.origin) : "";
  if (!plugin) return;
  for (const field of plugin.settings) {
    const id = `setting-${field.key}`;
    const label = el("label", { for: id }, field.label + (field.required ? "" : " (optional)"));
    let input;
    if (field.type === "bool") {
      input = el("select", { id, dataset: { key: field.key } },
        el("option", { value: "" }, `default (${field.default || "false"})`),
        el("option", { value: "true" }, "yes"), el("option", { value: "false" }, "no"));
    } else if (field.type === "plaintext-consent") {
      // The user's consent to connections in clear: no unless chosen, and said plainly.
      input = el("select", { id, dataset: { key: field.key } },
        el("option", { value: "" }, "no: encrypted connections only"),
        el("option", { value: "true" }, "yes: connect unencrypted (password and data readable on the network)"));
    } else {
      input = el("input", {
        id, dataset: { key: field.key }, autocomplete: "off", spellcheck: "false",
        type: field.type === "password" ? "password" : field.type === "number" ? "number" : field.type === "url" ? "url" : "text",
        placeholder: field.type === "directory" ? "/full/path/to/folder"
          : field.type === "certificate" ? "/full/path/to/ca.pem"
          : field.type === "url" ? urlExample(field.schemes) : (field.default || ""),
      });
    }
    box.append(label, input);
    if (field.description) box.append(el("p", { class: "hint" }, field.description));
  }
  $("#connector-asks").replaceChildren(...plugin.capabilities.map((c) => el("li", {}, c)));
}

// An example address for a URL setting of these schemes (`https` unless the plugin says).
function urlExample(schemes) {
  const scheme = (schemes && schemes[0]) || "https";
  return scheme === "https" || scheme === "http" ? `${scheme}://example.com/feed.xml` : `${scheme}://mail.example.com`;
}

async function addConnector(event) {
  event.preventDefault();
  showError("#connector-error", null);
  const plugin = $("#connector-plugin").value;
  const name = $("#connector-name").value.trim();
  const settings = {};
  for (const input of $("#connector-fields").querySelectorAll("[data-key]")) {
    if (input.value.trim()) settings[input.dataset.key] = input.value.trim();
  }
  if (!name) { showError("#connector-error", new Error("Enter a name for the connector.")); return; }
  try {
    await api("POST", "/admin/v1/connectors", { name, plugin, settings });
    $("#connector-name").value = "";
    renderPluginFields();
    toast(`“${name}” added; its first sync starts now.`);
    await loadConnectors();
    pollConnectors();
  } catch (error) { showError("#connector-error", error); }
}

function readFile(input, asText) {
  return new Promise((resolve, reject) => {
    const file = input.files[0];
    if (!file) { reject(new Error("Choose both files: the manifest and the component.")); return; }
    const reader = new FileReader();
    reader.onerror = () => reject(new Error(`Cannot read ${file.name}.`));
    reader.onload = () => resolve(asText ? reader.result : String(reader.result).split(",", 2)[1] || "");
    if (asText) reader.readAsText(file); else reader.readAsDataURL(file);
  });
}

async function checkPlugin(event) {
  event.preventDefault();
  showError("#plugin-error", null);
  try {
    const manifest = await readFile($("#plugin-manifest"), true);
    const component = await readFile($("#plugin-component"), false);
    const data = await api("POST", "/admin/v1/plugins/stage", { manifest, component_base64: component });
    state.stageId = data.stage_id;
    const p = data.plugin;
    const replacing = data.replaces_version ? ` It replaces the installed version ${data.replaces_version}.` : "";
    $("#plugin-about").textContent = `${p.name} ${p.version} (${p.id}, WIT ${p.wit}): ${p.description}${replacing}`;
    $("#plugin-asks").replaceChildren(...p.capabilities.map((c) => el("li", {}, c)));
    $("#plugin-grant").checked = false;
    $("#plugin-install").disabled = true;
    $("#plugin-review").hidden = false;
    $("#plugin-grant").focus();
  } catch (error) { showError("#plugin-error", error); }
}

async function answerPlugin(grant) {
  if (!state.stageId) return;
  const stageId = state.stageId;
  state.stageId = null;
  $("#plugin-review").hidden = true;
  try {
    const data = await api("POST", "/admin/v1/plugins/install", { stage_id: stageId, grant });
    if (data.installed) {
      toast(`${data.plugin.name} ${data.plugin.version} installed; add a connector with it below.`);
      await loadPlugins();
      $("#connector-plugin").value = data.plugin.id;
      renderPluginFields();
    } else {
      toast("Nothing was installed.");
    }
    $("#plugin-form").reset();
  } catch (error) { showError("#plugin-error", error); }
}

// --- activity --------------------------------------------------------------------------------

function fillActivityFilters() {
  const fill = (select, items, idKey) => {
    const previous = select.value;
    select.replaceChildren(el("option", { value: "" }, "All"),
      ...items.map((item) => el("option", { value: item[idKey] }, item.name)));
    if (items.some((item) => item[idKey] === previous)) select.value = previous;
  };
  fill($("#activity-integration"), state.integrations, "integration_id");
  fill($("#activity-connector"), state.connectors, "connector_id");
}

async function loadActivity(event) {
  if (event) event.preventDefault();
  const params = new URLSearchParams();
  if ($("#activity-integration").value) params.set("integration_id", $("#activity-integration").value);
  if ($("#activity-connector").value) params.set("connector_id", $("#activity-connector").value);
  if ($("#activity-since").value) params.set("since", $("#activity-since").value);
  const data = await api("GET", `/admin/v1/activity?${params}`);
  const body = $("#activity-table tbody");
  body.replaceChildren(...data.entries.map((e) => el("tr", {},
    el("td", {}, when(e.time)),
    el("td", {}, e.integration || e.integration_id),
    el("td", {}, el("code", {}, e.endpoint)),
    el("td", {}, e.connector || e.connector_id || ""),
    el("td", {}, e.doc_id ? el("code", {}, e.doc_id) : ""),
    el("td", { class: "num" }, e.bytes.toLocaleString()),
    el("td", { class: `num ${e.status >= 400 ? "error-text" : ""}` }, e.status))));
  const bytes = data.entries.reduce((sum, e) => sum + e.bytes, 0);
  const lost = data.lost_entries
    ? ` ${data.lost_entries.toLocaleString()} request(s) could not be recorded (the log's queue overflowed or the database failed; see the server's log).`
    : "";
  const held = data.held_back.length
    ? ` Held back from every integration: ${data.held_back.map((h) => `${h.count.toLocaleString()} file(s) in ${h.connector}`).join(", ")} (Connectors → Held back says which and why).`
    : "";
  $("#activity-summary").textContent = (data.entries.length
    ? `${data.entries.length} request(s), ${bytes.toLocaleString()} bytes sent${data.entries.length >= 200 ? " (the newest 200)" : ""}.`
    : "") + lost + held;
  $("#no-activity").hidden = data.entries.length > 0;
}

// --- start -----------------------------------------------------------------------------------

async function signOut() {
  try { await api("POST", "/settings/logout"); } catch (_) { /* going to the sign-in page anyway */ }
  window.location.assign("/settings/login");
}

document.addEventListener("DOMContentLoaded", async () => {
  $("#base-url").textContent = `${baseUrl}/api/v1`;
  $("#create-form").addEventListener("submit", createIntegration);
  $("#copy-key").addEventListener("click", () => copyText($("#api-key").value, "The key"));
  $("#copy-all").addEventListener("click", () => copyText($("#docs").textContent, "The API documentation"));
  $("#copy-mcp").addEventListener("click", () => copyText($("#docs").dataset.mcp, "The MCP configuration"));
  $("#docs-copy-all").addEventListener("click", () => copyText($("#docs-text").textContent, "The API documentation"));
  $("#created-done").addEventListener("click", clearCreated);
  $("#folder-form").addEventListener("submit", addFolder);
  $("#connector-form").addEventListener("submit", addConnector);
  $("#connector-plugin").addEventListener("change", renderPluginFields);
  $("#plugin-form").addEventListener("submit", checkPlugin);
  $("#plugin-grant").addEventListener("change", () => { $("#plugin-install").disabled = !$("#plugin-grant").checked; });
  $("#plugin-install").addEventListener("click", () => answerPlugin(true));
  $("#plugin-cancel").addEventListener("click", () => answerPlugin(false));
  $("#activity-form").addEventListener("submit", (e) => loadActivity(e).catch((err) => toast(err.message)));
  $("#held-mode").addEventListener("change", showModeWarning);
  $("#held-apply").addEventListener("click", applyMode);
  $("#release-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const pattern = $("#release-pattern").value.trim();
    if (pattern) releasePath(pattern, false).then(() => { $("#release-pattern").value = ""; });
  });
  $("#sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", showTab);
  try {
    await Promise.all([loadIntegrations(), loadConnectors(), loadPlugins()]);
  } catch (error) { toast(error.message); }
  showTab();
  document.body.dataset.ready = "true";
});
