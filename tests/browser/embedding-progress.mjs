// The settings page's second bar: right after a folder is synced its documents are searchable by
// keyword while their vectors are computed; the page shows how many wait for embeddings, then
// the bar goes once none do. Real headless Chromium against the real server with the model.
//
// Started by tests/tests/settings_browser.rs, which passes QUARRY_URL, QUARRY_TOKEN, PAPERS_DIR
// (a folder of a few hundred long documents) and SHOTS_DIR.
// Prints one JSON line: {"pending_seen": N} (the most documents the page showed waiting).
import { addFolder, check, env, lowestCountUntilGone, watchErrors, withPage } from "./harness.mjs";

await withPage("embedding", async (page, shot) => {
  const errors = watchErrors(page);
  const row = await addFolder(page, env("QUARRY_URL"), "Papers", env("PAPERS_DIR"));

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
  const lowest = Math.min(pendingSeen,
    await lowestCountUntilGone(page, waiting, 240, "vectors still pending"));
  check(lowest < pendingSeen, `the count fell while the page watched (${pendingSeen} -> ${lowest})`);
  check(!(await page.$(`${row} progress[aria-label="Embedding progress of Papers"]`)), "the bar is gone");
  await shot("done");
  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ pending_seen: pendingSeen }));
});
