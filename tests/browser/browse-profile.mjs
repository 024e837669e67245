// Writes a real Chromium profile: visits each address of VISIT (a JSON list) in the profile
// folder PROFILE_DIR (its bookmarks already there, if the test put them), then closes the
// browser, which writes its history as it would for a person. Prints {"visited": N}.
import { chromium } from "playwright-core";
import { env } from "./harness.mjs";

const urls = JSON.parse(env("VISIT"));
const context = await chromium.launchPersistentContext(env("PROFILE_DIR"), {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await context.newPage();
for (const url of urls) {
  await page.goto(url);
  await page.waitForLoadState("load");
}
await context.close();
console.log(JSON.stringify({ visited: urls.length }));
