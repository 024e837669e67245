// How fast the search page answers a person typing, in real headless Chromium: for each query
// (QUERIES, a JSON list), the box is cleared and the query typed key by key; the time from the
// debounce firing to the results being in the page and the next frame drawn (`searchMs`, which
// the page records) is set beside the same search's round trip through the admin API from the
// same page without drawing anything (`fetch`), the floor in the same run.
//
// Started by tests/benches/search_page.rs: QUARRY_URL, QUARRY_TOKEN, SHOTS_DIR, QUERIES.
// Prints one JSON line: {"page_ms": [...], "api_ms": [...], "results": [...]}.
import { check, env, launch, shotsDir } from "./harness.mjs";

const base = env("QUARRY_URL");
const queries = JSON.parse(env("QUERIES"));
const shots = shotsDir();

const browser = await launch();
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${base}/settings/login?next=%2Fsearch`);
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-ready=true]");
  await page.selectOption("#mode", "keyword");
  const pageMs = [];
  const apiMs = [];
  const results = [];
  for (const query of queries) {
    await page.fill("#q", "");
    await page.waitForFunction(() => document.body.dataset.searching !== "true");
    const before = Number(await page.evaluate(() => document.body.dataset.searchSeq || "0"));
    await page.locator("#q").pressSequentially(query, { delay: 30 });
    await page.waitForFunction((n) => Number(document.body.dataset.searchSeq || "0") > n
      && document.body.dataset.searching === "false", before);
    pageMs.push(Number(await page.evaluate(() => document.body.dataset.searchMs)));
    results.push(await page.$$eval("#results li.result", (items) => items.length));
    apiMs.push(await page.evaluate(async (q) => {
      const csrf = document.querySelector('meta[name="csrf-token"]').content;
      const started = performance.now();
      const response = await fetch("/admin/v1/search", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ query: q, limit: 20, offset: 0, semantic_search: false }),
      });
      await response.json();
      return performance.now() - started;
    }, query));
  }
  check(results.every((n) => n > 0), `every query found something: ${JSON.stringify(results)}`);
  await page.screenshot({ path: `${shots}/search-speed.png`, fullPage: false });
  process.stdout.write(JSON.stringify({ page_ms: pageMs, api_ms: apiMs, results }) + "\n");
} finally {
  await browser.close();
}
