// What the browser tests share: their settings from the environment, checks that fail the run,
// and Debian's Chromium launched headless with nothing that reaches the network by itself.
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

/** The environment variable `name`, which the Rust test must have set. */
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** Fails the run with `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** The screenshots folder (SHOTS_DIR), created if missing. */
export function shotsDir() {
  const shots = env("SHOTS_DIR");
  mkdirSync(shots, { recursive: true });
  return shots;
}

/** Headless Chromium (CHROMIUM, or Debian's). */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * The script errors of `page`, collected as they happen: uncaught exceptions, console errors and
 * refused requests. A refused request shows in the console as "Failed to load resource" without
 * its address, so refusals are checked by address instead (the browser's own favicon request
 * may 404).
 */
export function watchErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  // A document without a preview (its file not served) answers 404 and its picture is dropped:
  // that is the page working, not an error.
  const noPreview = (r) => r.status() === 404 && /\/pages\/\d+\/preview$/.test(new URL(r.url()).pathname);
  page.on("response", (r) => {
    if (r.status() >= 400 && new URL(r.url()).pathname !== "/favicon.ico" && !noPreview(r)) errors.push(`${r.status()} ${r.url()}`);
  });
  return errors;
}

/**
 * Signs in to the settings page at `base` with QUARRY_TOKEN and adds the folder `dir` as the
 * connector `name`; returns the selector of its row in the connectors table.
 */
export async function addFolder(page, base, name, dir) {
  await page.goto(`${base}/settings/login`);
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-ready=true]");
  await page.click("nav a[data-tab=connectors]");
  await page.fill("#folder-name", name);
  await page.fill("#folder-path", dir);
  await page.click("#folder-form button[type=submit]");
  const row = `#connector-table tr[data-name="${name}"]`;
  await page.waitForSelector(row);
  return row;
}

/**
 * Runs `body(page, shot)` in a new 1440 x 900 page of headless Chromium, where `shot(name)` saves
 * a full-page screenshot `${prefix}-${name}.png`. A failure saves `${prefix}-failure.png`, prints
 * the error and fails the run; the browser is closed either way.
 */
export async function withPage(prefix, body) {
  const shots = shotsDir();
  const browser = await launch();
  let page;
  try {
    page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    const shot = (name) => page.screenshot({ path: `${shots}/${prefix}-${name}.png`, fullPage: true });
    await body(page, shot);
  } catch (error) {
    if (page) await page.screenshot({ path: `${shots}/${prefix}-failure.png`, fullPage: true }).catch(() => {});
    console.error(error);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

/**
 * Watches the count (the first number) `selector` shows until the page removes it, at most
 * `seconds`; returns the lowest count seen. `what` names the wait in the failure.
 */
export async function lowestCountUntilGone(page, selector, seconds, what) {
  let lowest = Infinity;
  const deadline = Date.now() + seconds * 1000;
  while (await page.$(selector)) {
    check(Date.now() < deadline, `${what} after ${seconds} s (lowest count ${lowest})`);
    const now = /([\d,]+) document/.exec((await page.textContent(selector).catch(() => "")) || "");
    if (now) lowest = Math.min(lowest, Number(now[1].replaceAll(",", "")));
    await page.waitForTimeout(250);
  }
  return lowest;
}
