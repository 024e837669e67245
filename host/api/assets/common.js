// What Quarry's pages share (loaded before settings.js and search.js): the session's CSRF
// token, the admin API call that sends it (a lost session goes back to the sign-in form, which
// returns here), and building elements from text (never from HTML).
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (selector) => document.querySelector(selector);

async function api(method, path, body) {
  const init = { method, headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    const here = window.location.pathname + window.location.search;
    window.location.assign(`/settings/login?next=${encodeURIComponent(here)}`);
    throw new Error("Your session ended; sign in again.");
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error((data.error && data.error.message) || `The request failed (${response.status}).`);
    error.code = data.error && data.error.code;
    throw error;
  }
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function showError(selector, error) {
  const node = $(selector);
  node.textContent = error ? (error.message || String(error)) : "";
  node.hidden = !error;
}
