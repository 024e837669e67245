// An independent MCP client for Quarry's end-to-end tests, beside client.py: the official MCP
// TypeScript SDK (pinned in tests/mcp/ts/package-lock.json; `make setup` installs it into
// $QUARRY_MCP_TS) drives Quarry over Streamable HTTP or stdio, runs the steps it is given and
// prints what it saw as JSON, in client.py's shape, for the Rust tests to check.
//
// Usage: node client.mjs < plan.json (the plan is client.py's). Like the desktop and editor
// clients built on this SDK, it lists the tools first, so every call's structured content is
// checked against the tool's output schema by the SDK itself (it throws when it does not match).
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdkDir = process.env.QUARRY_MCP_TS;
if (!sdkDir) throw new Error("QUARRY_MCP_TS is not set: run `make setup`");
const require = createRequire(join(sdkDir, "package.json"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function transportFor(plan) {
  if (plan.transport === "http") {
    return new StreamableHTTPClientTransport(new URL(plan.url), {
      requestInit: { headers: plan.headers || {} },
    });
  }
  return new StdioClientTransport({
    command: plan.command,
    args: plan.args || [],
    env: plan.env || {},
    stderr: "pipe",
  });
}

async function step(client, s) {
  if (s.op === "list_tools") {
    const listed = await client.listTools();
    return { tools: listed.tools };
  }
  if (s.op === "call") {
    // callTool validates structured content against the listed tool's output schema.
    const result = await client.callTool({ name: s.tool, arguments: s.arguments || {} });
    const out = { ...result, isError: result.isError === true };
    out.text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    if (!out.isError) out.schema_valid = true;
    return out;
  }
  throw new Error(`unknown op ${s.op}`);
}

async function main() {
  const plan = await readStdin();
  const client = new Client({ name: "quarry-tests-ts", version: "1.0.0" });
  const transport = transportFor(plan);
  await client.connect(transport);
  try {
    // What clients built on this SDK do before their first call: learn the tools (and so their
    // output schemas).
    await client.listTools();
    const results = [];
    for (const s of plan.steps) {
      try {
        results.push(await step(client, s));
      } catch (e) {
        results.push({ protocol_error: `${e.name}: ${e.message}` });
      }
    }
    process.stdout.write(JSON.stringify({
      server: client.getServerVersion(),
      protocol_version: transport.protocolVersion ?? null,
      instructions: client.getInstructions() ?? null,
      results,
    }) + "\n");
  } finally {
    await client.close();
  }
}

try {
  await main();
} catch (e) {
  process.stdout.write(JSON.stringify({ error: `${e.name}: ${e.message}` }) + "\n");
}
