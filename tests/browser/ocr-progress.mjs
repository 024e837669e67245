// The settings page's OCR line: right after a folder of images is synced they are found by name
// while their text is read in the background; the page shows how many documents wait for OCR,
// then the line goes once none do. Real headless Chromium against the real server with the OCR
// models.
//
// Started by tests/tests/settings_browser.rs, which passes QUARRY_URL, QUARRY_TOKEN, SCANS_DIR
// (a folder of screenshots) and SHOTS_DIR.
// Prints one JSON line: {"pending_seen": N} (the most documents the page showed waiting).
import { addFolder, check, env, launch, shotsDir, watchErrors } from "./harness.mjs";

const base = env("QUARRY_URL");
const shots = shotsDir();

const browser = await launch();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  const errors = watchErrors(page);
  const shot = (name) => page.screenshot({ path: `${shots}/ocr-${name}.png`, fullPage: true });
  const row = await addFolder(page, base, "Scans", env("SCANS_DIR"));

  // While the images are read: the line and its count.
  const waiting = `${row} [data-ocr]`;
  await page.waitForSelector(waiting, { timeout: 60_000 });
  const text = await page.textContent(waiting);
  const match = /OCR: ([\d,]+) document\(s\) waiting to have their images read \(found by name meanwhile\)/.exec(text);
  check(match, `the line names the documents waiting: ${text}`);
  const pendingSeen = Number(match[1].replaceAll(",", ""));
  check(pendingSeen > 0, `some documents wait: ${text}`);
  await shot("pending");

  // The page polls while anything is pending: the count falls and the line goes by itself.
  let lowest = pendingSeen;
  const deadline = Date.now() + 120_000;
  while (await page.$(waiting)) {
    check(Date.now() < deadline, `images still waiting for OCR after 120 s (lowest count ${lowest})`);
    const now = /([\d,]+) document/.exec((await page.textContent(waiting).catch(() => "")) || "");
    if (now) lowest = Math.min(lowest, Number(now[1].replaceAll(",", "")));
    await page.waitForTimeout(250);
  }
  check(lowest < pendingSeen, `the count fell while the page watched (${pendingSeen} -> ${lowest})`);
  await shot("done");
  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ pending_seen: pendingSeen }));
} catch (error) {
  if (page) await page.screenshot({ path: `${shots}/ocr-failure.png`, fullPage: true }).catch(() => {});
  console.error(error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
