// The settings page's second bar: right after a folder is synced its documents are searchable by
// keyword while their vectors are computed; the page shows how many wait for embeddings, then
// the bar goes once none do. Real headless Chromium against the real server with the model.
//
// Started by tests/tests/settings_browser.rs, which passes QUARRY_URL, QUARRY_TOKEN, PAPERS_DIR
// (a folder of a few hundred long documents) and SHOTS_DIR.
// Prints one JSON line: {"pending_seen": N} (the most documents the page showed waiting).
import { addFolder, check, env, launch, shotsDir, watchErrors } from "./harness.mjs";

const base = env("QUARRY_URL");
const shots = shotsDir();

const browser = await launch();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  const errors = watchErrors(page);
  const shot = (name) => page.screenshot({ path: `${shots}/embedding-${name}.png`, fullPage: true });
  const row = await addFolder(page, base, "Papers", env("PAPERS_DIR"));

  // While vectors are computed: the second bar and its count, beside the documents' count.
  const waiting = `${row} [data-embedding]`;
  await page.waitForSelector(waiting, { timeout: 60_000 });
  // The count and the bar are read at once: the page re-renders every second.
  const { text, bar } = await page.$eval(row, (tr) => {
    const p = tr.querySelector('progress[aria-label="Embedding progress of Papers"]');
    return {
      text: tr.querySelector("[data-embedding]").textContent,
      bar: p && { value: p.value, max: p.max },
    };
  });
  const match = /meaning: ([\d,]+) document\(s\) waiting for embeddings \(found by keyword meanwhile\)/.exec(text);
  check(match, `the bar names the documents waiting: ${text}`);
  const pendingSeen = Number(match[1].replaceAll(",", ""));
  check(pendingSeen > 0, `some documents wait: ${text}`);
  check(bar && bar.max >= pendingSeen && bar.value === bar.max - pendingSeen,
    `the bar shows the embedded share (${JSON.stringify(bar)}, ${pendingSeen} waiting)`);
  await shot("pending");

  // The page polls while anything is pending: the count falls and the bar goes by itself.
  let lowest = pendingSeen;
  const deadline = Date.now() + 240_000;
  while (await page.$(waiting)) {
    check(Date.now() < deadline, `vectors still pending after 240 s (lowest count ${lowest})`);
    const now = /([\d,]+) document/.exec((await page.textContent(waiting).catch(() => "")) || "");
    if (now) lowest = Math.min(lowest, Number(now[1].replaceAll(",", "")));
    await page.waitForTimeout(250);
  }
  check(lowest < pendingSeen, `the count fell while the page watched (${pendingSeen} -> ${lowest})`);
  check(!(await page.$(`${row} progress[aria-label="Embedding progress of Papers"]`)), "the bar is gone");
  await shot("done");
  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ pending_seen: pendingSeen }));
} catch (error) {
  if (page) await page.screenshot({ path: `${shots}/embedding-failure.png`, fullPage: true }).catch(() => {});
  console.error(error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
