"""An independent MCP client for Quarry's end-to-end tests: the official MCP Python SDK
(pinned in requirements.txt) drives Quarry over Streamable HTTP or stdio, runs the steps it is
given and prints what it saw as JSON, for the Rust tests to check.

Usage: client.py < plan.json, where plan is
  {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "headers": {...},
   "steps": [...]}
or {"transport": "stdio", "command": "quarry", "args": [...], "env": {...}, "steps": [...]}
and each step is {"op": "list_tools"} or {"op": "call", "tool": NAME, "arguments": {...}}.
Prints {"server": {...}, "instructions": ..., "results": [one per step]} or {"error": "..."}.
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


@asynccontextmanager
async def connect(plan):
    if plan["transport"] == "http":
        http = create_mcp_http_client(headers=plan.get("headers") or {})
        async with http:
            async with streamable_http_client(plan["url"], http_client=http) as streams:
                yield streams[0], streams[1]
    else:
        params = StdioServerParameters(
            command=plan["command"], args=plan.get("args", []), env=plan.get("env")
        )
        async with stdio_client(params) as (read, write):
            yield read, write


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def step(session, s):
    if s["op"] == "list_tools":
        listed = await session.list_tools()
        return {"tools": [dump(t) for t in listed.tools]}
    if s["op"] == "call":
        result = await session.call_tool(s["tool"], s.get("arguments"))
        out = dump(result)
        out["text"] = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        if not result.is_error:
            # The SDK's own check of the answer against the tool's declared output schema.
            try:
                await session.validate_tool_result(s["tool"], result)
                out["schema_valid"] = True
            except Exception as e:  # noqa: BLE001 - reported to the test
                out["schema_valid"] = False
                out["schema_error"] = str(e)
        return out
    raise ValueError(f"unknown op {s['op']}")


async def main():
    plan = json.load(sys.stdin)
    async with connect(plan) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            results = []
            for s in plan["steps"]:
                try:
                    results.append(await step(session, s))
                except Exception as e:  # noqa: BLE001 - a protocol error is a result
                    results.append({"protocol_error": f"{type(e).__name__}: {e}"})
            print(json.dumps({
                "server": dump(init.server_info),
                "protocol_version": init.protocol_version,
                "instructions": init.instructions,
                "results": results,
            }))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as e:  # noqa: BLE001 - the test reads why
        def flat(e):
            if isinstance(e, BaseExceptionGroup):
                return "; ".join(flat(x) for x in e.exceptions)
            return f"{type(e).__name__}: {e}"
        print(json.dumps({"error": flat(e)}))
