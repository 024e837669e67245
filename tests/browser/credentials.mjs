// The settings page's Held back dialog in real headless Chromium against the real server: a
// folder with a key file and a note holding a token is added; the page counts what it holds
// back, lists which and why, releases the note after asking, then the key file by a pattern,
// and warns before the check is turned off (a refusal leaves it on).
//
// Started by tests/tests/settings_browser.rs, which passes QUARRY_URL, QUARRY_TOKEN, SHARE_DIR
// and SHOTS_DIR. Prints one JSON line: {"listed": [...paths], "released": path}.
import { addFolder, check, env, watchErrors, withPage } from "./harness.mjs";

await withPage("credentials", async (page, shot) => {
  const errors = watchErrors(page);
  const row = await addFolder(page, env("QUARRY_URL"), "Share", env("SHARE_DIR"));
  // The row counts what is held back once the first sync is done.
  const link = `${row} button[data-action=credentials]`;
  await page.waitForFunction((sel) => {
    const b = document.querySelector(sel);
    return b && b.textContent.includes("Held back: 2");
  }, link, { timeout: 60_000 });
  check((await page.textContent(`${row} [data-credentials]`)).includes("credentials held back"),
    "the row says credentials are held back");
  await shot("row");

  // Which and why, for the user only.
  await page.click(link);
  await page.waitForSelector("#held-list li");
  const listed = await page.$$eval("#held-list li", (items) => items.map((li) => ({
    path: li.dataset.path, text: li.textContent,
  })));
  check(listed.length === 2, `two files listed: ${JSON.stringify(listed)}`);
  const note = listed.find((i) => i.path === "deploy-notes.md");
  check(note && note.text.includes("holds a GitHub token"), `the note says why: ${JSON.stringify(listed)}`);
  const key = listed.find((i) => i.path === "server.key");
  check(key && key.text.includes("a private key"), `the key file says why: ${JSON.stringify(listed)}`);
  await shot("dialog");

  // Off warns first; a refusal leaves the check on.
  await page.selectOption("#held-mode", "off");
  check((await page.textContent("#held-warning")).includes("every integration it is shared with"),
    "choosing off shows what it means");
  await page.click("#held-apply");
  await page.waitForSelector("#ask-dialog[open]");
  check((await page.textContent("#ask-text")).includes("find them by search"), "the question repeats the warning");
  await shot("off-question");
  await page.click("#ask-dialog button[value=cancel]");
  // Cancelled: the choice goes back to holding back, and nothing was changed.
  await page.waitForFunction(() => document.querySelector("#held-mode").value === "hold",
    null, { timeout: 5_000 });
  check(!(await page.isVisible("#held-warning")), "cancelled: no warning left shown");

  // Releasing the note, after a question.
  await page.click('#held-list li[data-path="deploy-notes.md"] button[data-action=release]');
  await page.waitForSelector("#ask-dialog[open]");
  await page.click("#ask-ok");
  await page.waitForFunction(() => [...document.querySelectorAll("#held-released li")]
    .some((li) => li.textContent.includes("deploy-notes.md")));
  await page.waitForFunction((sel) => {
    const b = document.querySelector(sel);
    return b && b.textContent.includes("Held back: 1");
  }, link, { timeout: 30_000 });
  await shot("released");

  // A pattern releases what it matches.
  await page.fill("#release-pattern", "*.key");
  await page.click("#release-form button[type=submit]");
  await page.waitForSelector("#ask-dialog[open]");
  await page.click("#ask-ok");
  await page.waitForFunction((sel) => {
    const b = document.querySelector(sel);
    return b && b.textContent.includes("Credentials…");
  }, link, { timeout: 30_000 });
  check(errors.length === 0, `no script errors or refused requests: ${errors.join("; ")}`);
  console.log(JSON.stringify({ listed: listed.map((i) => i.path), released: ["deploy-notes.md", "*.key"] }));
});
