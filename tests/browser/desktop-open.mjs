// What the desktop's search hands the browser when a result is opened (docs/desktop.md): a private
// page on disk (OPEN_PAGE) that forwards to a one-time sign-in link. Opened as a fresh browser
// opens it, with no session, it must land signed in on the document view with the query's word
// marked (WORD); the page works once.
import { check, env, launch, shotsDir, watchErrors } from "./harness.mjs";

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  const errors = watchErrors(page);
  const opened = `file://${env("OPEN_PAGE")}`;
  await page.goto(opened);
  await page.waitForURL((url) => url.pathname.startsWith("/search/docs/"));
  await page.waitForSelector("body[data-doc-ready=true]");
  const marks = await page.$$eval("#doc-text mark", (ms) => ms.map((m) => m.textContent.toLowerCase()));
  check(marks.includes(env("WORD")), `the word is marked: ${JSON.stringify(marks)}`);
  const title = await page.textContent("#doc-title");
  await page.screenshot({ path: `${shotsDir()}/desktop-open-document.png` });
  check(errors.length === 0, `no errors: ${errors.join("; ")}`);

  // The link is spent: the same page again, in a browser with no session, signs nobody in.
  const stranger = await browser.newContext();
  const again = await stranger.newPage();
  await again.goto(opened);
  await again.waitForURL((url) => url.pathname === "/settings/login");
  const notice = await again.textContent("body");
  check(notice.includes("used already or has expired"), "a spent link says so");
  console.log(JSON.stringify({ title, marks, landed: page.url() }));
} finally {
  await browser.close();
}
