"""A local MCP server for the MCP-vendor tests (issue 27), written with the official Python
SDK's MCPServer (FastMCP in mcp 1.x) and run by Graft over stdio.

It has a read tool, a write tool, a tool whose result is an image, a tool that reports the
environment it was given, a slow tool (progress; a cancelled call leaves `cancelled` in its
working directory), a tool that changes its tool list at run time (list_changed), a tool
that makes it crash, and one that starts a child process (process-group hygiene). Marker
files go to its working directory, which Graft sets (`graft vendor add --cwd`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations

server = MCPServer("notes-test-server")
READ = ToolAnnotations(readOnlyHint=True)
# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@server.tool(annotations=READ, title="Read a note")
def read_note(id: str) -> dict[str, str]:
    """Reads the note with an id."""
    return {"id": id, "text": "hello from stdio"}


@server.tool()
def write_note(text: str) -> str:
    """Writes a note with a text and returns its id."""
    Path("written.txt").write_text(text)
    return "wrote n-7"


@server.tool(annotations=READ)
def picture() -> Image:
    """Draws a picture of a note."""
    return Image(data=PNG, format="png")


@server.tool(annotations=READ)
def env_report() -> dict[str, object]:
    """Says which environment the server was given."""
    return {"token": os.environ.get("NOTES_TOKEN"), "names": sorted(os.environ)}


@server.tool(annotations=READ)
async def slow(ctx: Context) -> str:
    """Counts to three slowly, reporting progress."""
    try:
        for step in range(1, 4):
            await anyio.sleep(0.2)
            await ctx.report_progress(step, 3, f"step {step}")
    except anyio.get_cancelled_exc_class():
        Path("cancelled").write_text("yes")
        raise
    return "counted to three"


@server.tool(annotations=READ)
async def hang() -> str:
    """Never answers."""
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        Path("cancelled").write_text("yes")
        raise
    return "never"


@server.tool(annotations=READ)
def crash() -> str:
    """Makes the server exit."""
    os._exit(3)


@server.tool(annotations=READ)
def spawn_child() -> dict[str, int]:
    """Starts a child process that outlives this call; says its and the server's pid."""
    child = subprocess.Popen(["sleep", "600"])
    return {"server": os.getpid(), "child": child.pid}


@server.tool(annotations=READ)
def garble() -> str:
    """Writes a line that is not JSON-RPC to its stdout, then answers."""
    os.write(1, b"this is not JSON-RPC {\n")
    return "garbled"


def extra() -> str:
    """A tool that appeared at run time."""
    return "extra"


@server.tool(annotations=READ)
async def change_tools(ctx: Context) -> str:
    """Takes write_note away, adds extra, and says the list changed."""
    server.remove_tool("write_note")
    server.add_tool(extra, annotations=READ)
    # a 2025 session hears it on the session, a 2026 client on its listen stream
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return "changed"


if __name__ == "__main__":
    # what a careless server does: print the credential it was given to its stderr
    # (Graft's log must not show it)
    print(f"starting with token {os.environ.get('NOTES_TOKEN')}", file=sys.stderr, flush=True)
    # a child started with the server, when its working directory asks for one
    if Path("spawn-child-at-start").exists():
        child = subprocess.Popen(["sleep", "600"])
        Path("child.pid").write_text(str(child.pid))
    server.run("stdio")
