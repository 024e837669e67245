// The settings page's OCR line: right after a folder of images is synced they are found by name
// while their text is read in the background; the page shows how many documents wait for OCR,
// then the line goes once none do. Real headless Chromium against the real server with the OCR
// models.
//
// Started by tests/tests/settings_browser.rs, which passes QUARRY_URL, QUARRY_TOKEN, SCANS_DIR
// (a folder of screenshots) and SHOTS_DIR.
// Prints one JSON line: {"pending_seen": N} (the most documents the page showed waiting).
import { addFolder, check, env, lowestCountUntilGone, watchErrors, withPage } from "./harness.mjs";

await withPage("ocr", async (page, shot) => {
  const errors = watchErrors(page);
  const row = await addFolder(page, env("QUARRY_URL"), "Scans", env("SCANS_DIR"));

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
  const lowest = Math.min(pendingSeen,
    await lowestCountUntilGone(page, waiting, 120, "images still waiting for OCR"));
  check(lowest < pendingSeen, `the count fell while the page watched (${pendingSeen} -> ${lowest})`);
  await shot("done");
  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ pending_seen: pendingSeen }));
});
