// The settings page's "add connector" form for the IMAP plugin: its settings as a person fills
// them (the server's address, a password field, the CA file's path), what it will be allowed to
// reach said before it is added, then the connector reaching idle with the mailbox's messages.
// Real headless Chromium against the real server and a real Dovecot.
//
// Started by tests/tests/imap.rs, which passes QUARRY_URL, QUARRY_TOKEN, IMAP_SERVER,
// IMAP_USER, IMAP_PASSWORD, IMAP_CA and SHOTS_DIR.
// Prints one JSON line: {"asks": [...]} (what the form said the plugin may do).
import { check, env, watchErrors, withPage } from "./harness.mjs";

await withPage("imap", async (page, shot) => {
  const errors = watchErrors(page);
  await page.goto(`${env("QUARRY_URL")}/settings/login`);
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-ready=true]");
  await page.click("nav a[data-tab=connectors]");
  await page.selectOption("#connector-plugin", "imap");
  const origin = await page.textContent("#connector-plugin-origin");
  check(origin === "Comes with Quarry.", `the form says where the plugin is from: ${origin}`);

  // The fields: a password is typed into a password field; the address and the CA file say
  // what they take.
  check(await page.getAttribute("#setting-password", "type") === "password", "the password field hides what is typed");
  const placeholder = await page.getAttribute("#setting-server", "placeholder");
  check(placeholder.startsWith("imaps://"), `the server field shows an imaps:// example: ${placeholder}`);
  check((await page.getAttribute("#setting-ca_file", "placeholder")).endsWith(".pem"), "the CA file field asks for a PEM file");
  const asks = await page.$$eval("#connector-asks li", (lis) => lis.map((li) => li.textContent));
  check(asks.some((a) => a.includes("Connect to the server you give as “Server”")
    && a.includes("in clear only if you set “Allow unencrypted” to true")),
    `the form says what it may reach: ${JSON.stringify(asks)}`);
  // Connections in clear are the user's choice, off unless chosen.
  check(await page.inputValue("#setting-allow_plaintext") === "", "the consent to connect in clear starts at no");
  const consent = await page.$$eval("#setting-allow_plaintext option", (os) => os.map((o) => o.textContent));
  check(consent[0].startsWith("no") && consent[1].includes("unencrypted"), `the consent says what it means: ${JSON.stringify(consent)}`);
  check(asks.some((a) => a.includes("certificate authorities in the file you give as “CA file”")),
    `the form says what the CA file is for: ${JSON.stringify(asks)}`);

  await page.fill("#connector-name", "Mail");
  await page.fill("#setting-server", env("IMAP_SERVER"));
  await page.fill("#setting-username", env("IMAP_USER"));
  await page.fill("#setting-password", env("IMAP_PASSWORD"));
  await page.fill("#setting-ca_file", env("IMAP_CA"));
  await shot("form");
  await page.click("#connector-form button[type=submit]");
  const row = '#connector-table tr[data-name="Mail"]';
  await page.waitForSelector(row);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await page.getAttribute(row, "data-status");
    const docs = Number((await page.textContent(`${row} td:nth-child(4)`)).replace(/\D/g, ""));
    if (status === "idle" && docs > 0) break;
    check(Date.now() < deadline, `the connector reaches idle with its messages (${status}, ${docs})`);
    await page.waitForTimeout(200);
  }
  const shown = await page.textContent("body");
  check(!shown.includes(env("IMAP_PASSWORD")), "the password is not shown on the page");
  await shot("added");
  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ asks }));
});
