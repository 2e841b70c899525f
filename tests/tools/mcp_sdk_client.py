"""Test helper (tests/it/mcp.rs): an MCP client built on the official MCP Python SDK: starts `profscope mcp` over stdio, lists
the tools, and calls `analyze` on the given root; prints one JSON object with what it saw."""
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(binary, root):
    params = StdioServerParameters(command=binary, args=["mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            out = {"protocol": str(getattr(init, "protocol_version", None) or getattr(init, "protocolVersion", None)),
                   "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools],
                   "calls": {}}
            for label, args in [("default", {"paths": [root]}),
                                ("bytes9000", {"paths": [root], "max_bytes": 9000}),
                                ("bad", {"paths": ["/nonexistent/profscope"]})]:
                r = await session.call_tool("analyze", args)
                text = r.content[0].text if r.content else ""
                out["calls"][label] = {"is_error": r.is_error if hasattr(r, "is_error") else r.isError,
                                       "text_bytes": len(text),
                                       "structured": r.structured_content if hasattr(r, "structured_content") else r.structuredContent}
            print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2]))
