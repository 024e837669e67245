// Walks the settings page in real headless Chromium, as a person would: sign in with the admin
// token, add two folders and watch their progress reach idle, create an integration and answer
// the data sharing prompt (SHARE_MODE: all, selected or declined), copy the key and the
// generated docs through the clipboard, run the docs' curl line against the API, check the
// activity log, revoke, and see the key refused. Screenshots go to SHOTS_DIR.
//
// Started by tests/tests/settings_browser.rs, which runs the real server and passes:
// QUARRY_URL, QUARRY_TOKEN, NOTES_DIR, PRIVATE_DIR, SHARE_MODE, SHOTS_DIR.
// Prints one JSON line: {"api_key": ...} for the caller's own checks (the server log).
import { execFileSync } from "node:child_process";
import { check, env, launch, shotsDir } from "./harness.mjs";

const base = env("QUARRY_URL");
const mode = env("SHARE_MODE");
const shots = shotsDir();

const browser = await launch();
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Refused requests the test makes on purpose show as "Failed to load resource"; anything
  // else logged as an error is the page's fault.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  const shot = (name) => page.screenshot({ path: `${shots}/${mode}-${name}.png`, fullPage: true });
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  // Sign in: the page sends strangers to the sign-in form.
  await page.goto(`${base}/settings`);
  check(page.url().endsWith("/settings/login"), `unsigned visit lands on the sign-in form, got ${page.url()}`);
  await page.fill("#token", "not-the-token");
  await page.click("button[type=submit]");
  await page.waitForSelector("p.error");
  check((await page.textContent("p.error")).includes("not the admin token"), "a wrong token is refused");
  await shot("login");
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-ready=true]");
  check(page.url().endsWith("/settings"), `signed in, on ${page.url()}`);

  // Connectors: add two folders, watch them reach idle with their documents.
  await page.click("nav a[data-tab=connectors]");
  const addFolder = async (name, dir) => {
    await page.fill("#folder-name", name);
    await page.fill("#folder-path", dir);
    await page.click("#folder-form button[type=submit]");
    await page.waitForSelector(`#connector-table tr[data-name="${name}"]`);
  };
  await addFolder("Notes", env("NOTES_DIR"));
  await addFolder("Private", env("PRIVATE_DIR"));
  // A folder that does not exist is refused, naming the field.
  await page.fill("#folder-name", "Missing");
  await page.fill("#folder-path", "/no/such/folder");
  await page.click("#folder-form button[type=submit]");
  await page.waitForSelector("#folder-error:not([hidden])");
  check((await page.textContent("#folder-error")).includes("cannot open"), "a missing folder is refused");
  const seenStatuses = new Set();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await page.$$eval("#connector-table tbody tr", (trs) => trs.map((tr) => ({
      name: tr.dataset.name, status: tr.dataset.status, docs: Number(tr.children[3].textContent.replace(/\D/g, "")),
    })));
    rows.forEach((r) => seenStatuses.add(r.status));
    if (rows.length === 2 && rows.every((r) => r.status === "idle" && r.docs > 0)) break;
    check(Date.now() < deadline, `connectors reach idle with documents: ${JSON.stringify(rows)}`);
    await page.waitForTimeout(200);
  }
  await page.fill("#folder-path", "");
  await page.fill("#folder-name", "");
  await shot("connectors");

  // AI Integrations > More options > API: name, Create, the data sharing prompt.
  await page.click("nav a[data-tab=integrations]");
  await page.click("#more-options summary");
  const name = `Agent ${mode}`;
  await page.fill("#integration-name", name);
  await page.click("#create-button");
  await page.waitForSelector("#sharing-dialog[open]");
  await page.check(`#sharing-dialog input[name=sharing][value=${mode}]`);
  if (mode === "selected") {
    // Continuing with nothing ticked is refused in the prompt itself.
    await page.click("#sharing-ok");
    await page.waitForSelector("#sharing-error:not([hidden])");
    const notes = await page.$$eval("#sharing-connectors label", (ls) =>
      ls.findIndex((l) => l.textContent.trim() === "Notes"));
    check(notes >= 0, "the prompt lists the Notes connector");
    await page.check(`#sharing-connectors label:nth-child(${notes + 1}) input`);
  }
  await shot("sharing-prompt");
  await page.click("#sharing-ok");
  await page.waitForSelector("#created:not([hidden])");

  // The key, shown once, copied; then Copy All.
  const key = await page.inputValue("#api-key");
  check(/^qry_[A-Za-z0-9]{49}$/.test(key), `a key is shown: ${key.slice(0, 6)}...`);
  await page.click("#copy-key");
  check(await clipboard() === key, "Copy key puts the key on the clipboard");
  await page.click("#copy-all");
  const docs = await clipboard();
  await shot("created");
  check(docs === await page.textContent("#docs"), "Copy All copies the whole documentation");
  check(docs.includes(`Base URL: ${base}/api/v1`), "the docs name the base URL");
  check(docs.includes(`Authorization: Bearer ${key}`), "the docs carry the key");
  for (const needle of ["POST /api/v1/search", "GET /api/v1/connectors/{connector_id}/docs/{doc_id}/file",
    "GET /api/v1/connectors", "DATA_SHARING_DECLINED", "QUOTA_EXCEEDED", "X-Quota-Remaining"]) {
    check(docs.includes(needle), `the docs mention ${needle}`);
  }

  // The docs' own curl line, run as a user (or an agent) would.
  const curlLine = docs.split("\n").find((l) => l.startsWith("curl "));
  check(curlLine, "the docs have a curl line");
  const runCurl = () => JSON.parse(execFileSync("bash", ["-c", curlLine], { encoding: "utf8" }));
  const answer = runCurl();
  if (mode === "declined") {
    check(answer.error && answer.error.code === "DATA_SHARING_DECLINED", `declined: ${JSON.stringify(answer)}`);
  } else {
    check(Array.isArray(answer.results) && answer.results.length > 0, `results: ${JSON.stringify(answer)}`);
    const from = new Set(answer.results.map((r) => r.connector_name));
    if (mode === "selected") check(from.size === 1 && from.has("Notes"), `only Notes is searched: ${[...from]}`);
    else check(from.has("Notes") && from.has("Private"), `both folders are searched: ${[...from]}`);
  }

  // The MCP configuration, copied, connects an independent MCP client (the official Python SDK).
  await page.click("#copy-mcp");
  const mcp = JSON.parse(await clipboard()).mcpServers.quarry;
  check(mcp.url === `${base}/mcp`, `the MCP configuration names the endpoint: ${mcp.url}`);
  check(mcp.headers.Authorization === `Bearer ${key}`, "the MCP configuration carries the key");
  const listConnectors = () => {
    const plan = { transport: "http", url: mcp.url, headers: mcp.headers,
      steps: [{ op: "call", tool: "list_connectors", arguments: {} }] };
    const report = JSON.parse(execFileSync(process.env.MCP_PYTHON, [process.env.MCP_CLIENT],
      { input: JSON.stringify(plan), encoding: "utf8" }));
    check(Array.isArray(report.results), `the MCP client connected: ${JSON.stringify(report)}`);
    return report.results[0];
  };
  const listed = listConnectors();
  if (mode === "declined") {
    check(listed.isError && !listed.structuredContent && listed._meta["quarry/error"].error.code === "DATA_SHARING_DECLINED", `declined over MCP: ${JSON.stringify(listed)}`);
  } else {
    const names = listed.structuredContent.connectors.map((c) => c.name).sort();
    const expected = mode === "selected" ? ["Notes"] : ["Notes", "Private"];
    check(JSON.stringify(names) === JSON.stringify(expected), `MCP lists the shared connectors: ${names}`);
  }

  // Done: the key leaves the page, and no later page or admin answer shows it.
  await page.click("#created-done");
  check(await page.inputValue("#api-key") === "", "Done clears the key");
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  check(!(await page.content()).includes(key), "the reloaded page does not contain the key");
  const id = await page.$eval(`#integration-table tr[data-name="${name}"]`, (tr) => tr.dataset.id);
  for (const path of ["/admin/v1/integrations", `/admin/v1/integrations/${id}/docs`, "/admin/v1/connectors",
    "/admin/v1/activity", "/admin/v1/plugins"]) {
    const body = await page.evaluate(async (p) => (await fetch(p)).text(), path);
    check(!body.includes(key), `${path} does not contain the key`);
  }
  await page.click(`#integration-table tr[data-name="${name}"] button[data-action=docs]`);
  await page.waitForSelector("#docs-dialog[open]");
  check((await page.textContent("#docs-text")).includes("$QUARRY_API_KEY"), "later docs have a placeholder");
  await shot("docs-later");
  await page.keyboard.press("Escape");

  // Activity: the search is there, under this integration.
  await page.click("nav a[data-tab=activity]");
  await page.selectOption("#activity-integration", id);
  await page.click("#activity-form button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("#activity-table tbody tr").length > 0);
  const activity = await page.$$eval("#activity-table tbody tr", (trs) => trs.map((tr) => tr.textContent));
  check(activity.some((t) => t.includes("POST /api/v1/search") && t.includes(name)), `activity lists the search: ${activity}`);
  await shot("activity");

  // Revoke: the same curl line is now refused.
  await page.click("nav a[data-tab=integrations]");
  await page.click(`#integration-table tr[data-name="${name}"] button[data-action=revoke]`);
  await page.waitForSelector("#ask-dialog[open]");
  await page.click("#ask-ok");
  await page.waitForSelector(`#integration-table tr[data-name="${name}"] .badge.muted`);
  const refused = runCurl();
  check(refused.error && refused.error.code === "UNAUTHORIZED", `revoked: ${JSON.stringify(refused)}`);
  const refusedOverMcp = listConnectors();
  check(refusedOverMcp.isError && !refusedOverMcp.structuredContent && refusedOverMcp._meta["quarry/error"].error.code === "UNAUTHORIZED", `revoked over MCP: ${JSON.stringify(refusedOverMcp)}`);
  await shot("integrations");

  check(errors.length === 0, `no script errors on the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ api_key: key, statuses_seen: [...seenStatuses] }));
} catch (error) {
  if (page) await page.screenshot({ path: `${shots}/${mode}-failure.png`, fullPage: true }).catch(() => {});
  console.error(error.stack || String(error));
  process.exitCode = 1;
} finally {
  await browser.close();
}
