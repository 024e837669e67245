// The search page in real headless Chromium, as a person uses it: open an agent's citation
// `link` without a session (the sign-in form, nothing of the document), sign in and land on the
// cited page of the PDF with the word marked, page through it, download the original; then
// search as one types, see highlights, filter by connector, by type and by time, "see as" an integration
// that shares one connector, and move through results with the keyboard. Screenshots go to
// SHOTS_DIR.
//
// Started by tests/tests/search_page.rs, which runs the real server and passes: QUARRY_URL,
// QUARRY_TOKEN, SHOTS_DIR, LINK (a REST search result's `link` for "costs" in report.pdf, page
// 2), NOTES_ID, MAIL_ID, SEE_AS (the id of an integration sharing only Notes).
// Prints one JSON line: {"download": {...}, "search_ms": [...]}.
import { readFileSync } from "node:fs";
import { check, env, launch, shotsDir } from "./harness.mjs";

const base = env("QUARRY_URL");
const link = env("LINK");
const notesId = env("NOTES_ID");
const mailId = env("MAIL_ID");
const seeAs = env("SEE_AS");
const shots = shotsDir();

const browser = await launch();
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  const shot = (name) => page.screenshot({ path: `${shots}/search-${name}.png`, fullPage: true });

  // The citation without a session: the sign-in form, and nothing of the document.
  const cited = new URL(link);
  check(cited.pathname.startsWith("/search/docs/"), `a link to the document view: ${link}`);
  await page.goto(`${base}${cited.pathname}${cited.search}`);
  check(new URL(page.url()).pathname === "/settings/login", `unsigned, the link lands on sign-in: ${page.url()}`);
  const stranger = await page.textContent("body");
  check(!stranger.includes("Costs fell") && !stranger.includes("Quarterly"), "the sign-in form shows nothing of the document");
  await shot("sign-in");

  // Signed in, back on the cited page with the word marked.
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-doc-ready=true]");
  check(new URL(page.url()).pathname === cited.pathname, `back on the cited document: ${page.url()}`);
  check((await page.textContent("#page-position")) === "Page 2 of 3", `on page 2: ${await page.textContent("#page-position")}`);
  check((await page.textContent("#doc-text")).includes("Costs fell sharply"), "page 2's text is shown");
  const marks = await page.$$eval("#doc-text mark", (ms) => ms.map((m) => m.textContent));
  check(marks.length === 1 && marks[0] === "Costs", `the query's word is marked: ${JSON.stringify(marks)}`);
  check((await page.textContent("#doc-title")) === "report.pdf", "the title is shown");
  check((await page.textContent("#doc-meta")).includes("Notes"), "the connector is named");
  check((await page.textContent("#doc-meta")).includes("application/pdf"), "the metadata is shown");
  await shot("document");

  // Page by page, with the keyboard too.
  await page.click("#next-page");
  await page.waitForFunction(() => document.querySelector("#page-position").textContent === "Page 3 of 3");
  check((await page.textContent("#doc-text")).includes("outlook"), "page 3's text");
  check(await page.isDisabled("#next-page"), "no page after the last");
  await page.locator("#doc-text").focus();
  await page.keyboard.press("ArrowLeft");
  await page.waitForFunction(() => document.querySelector("#page-position").textContent === "Page 2 of 3");
  check(page.url().includes("page=2"), `the address follows the page: ${page.url()}`);

  // The original file.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
  const saved = await download.path();
  const bytes = readFileSync(saved);
  check(bytes.subarray(0, 4).toString() === "%PDF", "the download is the PDF");
  const downloaded = { name: download.suggestedFilename(), bytes: bytes.length };

  // Search as one types: results with highlights.
  await page.goto(`${base}/search`);
  await page.waitForSelector("body[data-ready=true]");
  const searched = async (action) => {
    const before = Number(await page.evaluate(() => document.body.dataset.searchSeq || "0"));
    await action();
    await page.waitForFunction((n) => Number(document.body.dataset.searchSeq || "0") > n
      && document.body.dataset.searching === "false", before);
    return Number(await page.evaluate(() => document.body.dataset.searchMs));
  };
  const timings = [];
  timings.push(await searched(() => page.locator("#q").pressSequentially("revenue", { delay: 40 })));
  const titles = async () => page.$$eval("#results li.result", (items) => items.map((li) => ({
    title: li.querySelector("a.result-title").textContent,
    connector: li.dataset.connectorId,
    marks: [...li.querySelectorAll("mark")].map((m) => m.textContent.toLowerCase()),
  })));
  let results = await titles();
  // By meaning and words (the default): the five documents with the word first, marked.
  const withWord = results.slice(0, 5);
  check(withWord.every((r) => r.marks.includes("revenue")), `the snippets mark the word: ${JSON.stringify(results)}`);
  // Words only: every result has it.
  timings.push(await searched(() => page.selectOption("#mode", "keyword")));
  results = await titles();
  check(results.length === 5 && results.every((r) => r.marks.includes("revenue")), `every snippet marks the word: ${JSON.stringify(results)}`);
  check(results.some((r) => r.connector === notesId) && results.some((r) => r.connector === mailId), "both connectors found");
  check(new URL(page.url()).searchParams.get("q") === "revenue", `the address keeps the search: ${page.url()}`);
  await shot("results");

  // Filters: one connector, then one type.
  timings.push(await searched(() => page.selectOption("#connector", "Mail")));
  results = await titles();
  check(results.length >= 1 && results.every((r) => r.connector === mailId), `only Mail: ${JSON.stringify(results)}`);
  timings.push(await searched(() => page.selectOption("#connector", "")));
  timings.push(await searched(() => page.selectOption("#type", "pdf")));
  results = await titles();
  check(results.length === 1 && results[0].title === "report.pdf", `only the PDF: ${JSON.stringify(results)}`);
  // Its card shows the cited page, drawn by the page renderer once the card is in view.
  await page.waitForFunction(() => {
    const img = document.querySelector("#results li.result img.thumb");
    return img && img.complete && img.naturalWidth > 0;
  });
  const thumb = await page.$eval("#results li.result img.thumb", (i) => ({ w: i.naturalWidth, h: i.naturalHeight, src: i.src }));
  check(thumb.w === 240 && thumb.h > 240 && thumb.src.includes("/pages/"), `the PDF's page is drawn: ${JSON.stringify(thumb)}`);
  await shot("thumbnail");
  timings.push(await searched(() => page.selectOption("#type", "")));
  // Time: every note is older than a month (the fixtures date from January to July 2026).
  timings.push(await searched(() => page.selectOption("#time", "31")));
  check((await titles()).length === 0 && (await page.textContent("#summary")).startsWith("Nothing found"), "nothing updated in the past month");
  timings.push(await searched(() => page.selectOption("#time", "")));
  check((await titles()).length === 5, "all five again without the time filter");

  // See as an integration that shares only Notes: Mail's documents are gone.
  timings.push(await searched(() => page.selectOption("#see-as", seeAs)));
  results = await titles();
  check(results.length >= 1 && results.every((r) => r.connector === notesId), `as NotesOnly, only Notes: ${JSON.stringify(results)}`);
  check(!(await page.isHidden("#see-as-note")), "the page says whose view this is");
  const offered = await page.$$eval("#connector option", (os) => os.map((o) => o.value));
  check(JSON.stringify(offered) === JSON.stringify(["", "Notes"]), `only its connectors are offered: ${offered}`);
  check((await page.textContent("#summary")).includes("NotesOnly"), "the summary names the integration");
  await shot("see-as");
  timings.push(await searched(() => page.selectOption("#see-as", "")));

  // The keyboard: down to the first result, Enter opens it, Escape comes back.
  await page.locator("#q").focus();
  await page.keyboard.press("ArrowDown");
  const focused = await page.evaluate(() => document.activeElement.className);
  check(focused === "result-title", `down moves to the first result: ${focused}`);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Enter");
  await page.waitForSelector("body[data-doc-ready=true]");
  check(page.url().includes("/search/docs/"), `Enter opened the result: ${page.url()}`);
  check((await page.$$("#doc-text mark")).length >= 1, "the opened document marks the word");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#results li.result");
  check(new URL(page.url()).pathname === "/search", `Escape went back: ${page.url()}`);
  check((await page.inputValue("#q")) === "revenue", "the search is still there");

  check(errors.length === 0, `no errors in the page: ${errors.join("; ")}`);
  process.stdout.write(JSON.stringify({ download: downloaded, search_ms: timings }) + "\n");
} catch (e) {
  if (page) await page.screenshot({ path: `${shots}/search-failure.png`, fullPage: true }).catch(() => {});
  throw e;
} finally {
  await browser.close();
}
