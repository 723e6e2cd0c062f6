"""MCP servers as vendors (issue 27): a local MCP server written with the Python SDK's
MCPServer (`upstream_server.py`), added with the CLI as `graft vendor add notes
--mcp-command …`, run by Graft over stdio, and used by an agent on the Python SDK's client.

Checked, through MCP as an agent meets it:

* discovery from the CLI (the server started, listed, stopped), its tools promoted and
  served with their annotations and output schema;
* a read runs; a write asks a person first (`graft approve`), then runs; an image result
  arrives as an image; the environment is Graft's PATH/HOME/locale plus the vendor's `env`
  connection, whose value never reaches the agent;
* the server's progress reaches the agent; a call the agent gives up on is cancelled in
  the server (it leaves `cancelled` in its working directory);
* the server changes its tool list: Graft hears list_changed, the removed tool is retired
  and demoted (cause "removed by its server"), the agent gets list_changed;
* a line on the server's stdout that is not JSON-RPC is skipped, calls go on;
* the server crashes: the call fails clearly, and the next one runs on a restarted server;
* nothing is left behind: SIGTERM and SIGKILL of `graft serve` end the server and a child
  process it started (its process group).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import GRAFT_BIN, GraftServer, Inbox, legacy_session, run_cli, serve

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("upstream_server.py")
LIST_CHANGED = "notifications/tools/list_changed"
SECRET = "notes-secret-7f3a9c"


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if pid_alive(p)]
        if not alive:
            return []
        time.sleep(0.1)
    return [p for p in pids if pid_alive(p)]


def setup_graft(root: Path) -> tuple[Path, Path, str]:
    """A data dir with MCP vendor `notes` (its server in `work`), its env connection, an agent."""
    data_dir, work = root / "data", root / "work"
    data_dir.mkdir()
    work.mkdir()
    command = f"{sys.executable} {SERVER}"
    out = run_cli("vendor", "add", "notes", "--mcp-command", command, "--cwd", str(work), data_dir=data_dir).stdout
    assert "Created MCP vendor notes" in out, out
    assert "10 new tools" in out, out
    out = run_cli(
        "connection", "add", "notes", "--label", "token", "--kind", "env", "--name", "NOTES_TOKEN", "--secret-stdin",
        data_dir=data_dir, stdin=SECRET + "\n",
    ).stdout
    assert "env" in out, out
    token = run_cli("agent", "add", "bot", data_dir=data_dir).stdout.strip().splitlines()[-1].strip()
    return data_dir, work, token


@pytest.fixture(scope="module")
def graft() -> Iterator[tuple[GraftServer, Path]]:
    assert Path(GRAFT_BIN).exists(), f"GRAFT_BIN {GRAFT_BIN} does not exist: build graft first"
    with tempfile.TemporaryDirectory(prefix="graft-mcp-vendors-") as root:
        data_dir, work, token = setup_graft(Path(root))
        server = serve(data_dir, Path(root) / "graft.log", {"bot": token})
        try:
            yield server, work
        finally:
            code = server.stop(timeout=20.0)
            assert code == 0, f"graft exited {code} after SIGTERM\n{server.log_tail()}"


def sc(result: types.CallToolResult) -> Any:
    return result.structured_content


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def promote(session: Any, *names: str) -> None:
    for name in names:
        r = await session.call_tool("promote", {"vendor": "notes", "name": name})
        assert not r.is_error, r


async def test_a_local_servers_tools_run_through_graft(graft: tuple[GraftServer, Path]) -> None:
    server, work = graft
    inbox = Inbox()
    async with legacy_session(server.url, server.tokens["bot"], inbox) as (session, _init, _wire):
        await promote(session, "read_note", "write_note", "picture", "env_report", "slow", "hang")
        await inbox.wait_for(LIST_CHANGED, 6)
        listed = {t.name: t for t in (await session.list_tools()).tools}
        read = listed["notes__read_note"]
        assert read.annotations is not None and read.annotations.read_only_hint is True
        assert read.output_schema is not None and read.output_schema["type"] == "object", read.output_schema
        assert listed["notes__write_note"].annotations.read_only_hint is False

        r = await session.call_tool("notes__read_note", {"id": "n-1"})
        assert not r.is_error, r
        assert sc(r) == {"id": "n-1", "text": "hello from stdio"}

        r = await session.call_tool("notes__write_note", {"text": "hi"})
        assert r.is_error and "approval_required" in text(r), r
        assert not (work / "written.txt").exists()
        data_dir = server.data_dir
        out = run_cli("approve", "bot", "notes__write_note", data_dir=data_dir).stdout
        assert "granted" in out.lower() or "approved" in out.lower(), out
        r = await session.call_tool("notes__write_note", {"text": "hi"})
        assert not r.is_error, r
        assert (work / "written.txt").read_text() == "hi"

        r = await session.call_tool("notes__picture", {})
        assert any(isinstance(c, types.ImageContent) and c.mime_type == "image/png" for c in r.content), r

        # Graft's environment stays Graft's: the server gets PATH and friends and its own
        # variable, whose value the agent never sees
        r = await session.call_tool("notes__env_report", {})
        report = sc(r)
        assert report["token"] == "<redacted>", report
        assert SECRET not in json.dumps(r.model_dump(mode="json"))
        allowed = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "NOTES_TOKEN"}
        assert set(report["names"]) <= allowed, report["names"]
        assert "NOTES_TOKEN" in report["names"]

        # progress reaches the agent
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        r = await session.call_tool("notes__slow", {}, progress_callback=on_progress)
        assert text(r) == "counted to three", r
        # the SDK runs progress callbacks in tasks of their own: the last may come just
        # after the result
        with anyio.move_on_after(2):
            while len(seen) < 3:
                await anyio.sleep(0.02)
        assert seen == [1, 2, 3], seen

        # an agent that gives up cancels the server's call
        with pytest.raises(Exception):
            await session.call_tool("notes__hang", {}, read_timeout_seconds=1.0)
        deadline = time.monotonic() + 10
        while not (work / "cancelled").exists():
            assert time.monotonic() < deadline, f"the server's call was not cancelled\n{server.log_tail()}"
            await anyio.sleep(0.05)


async def test_a_changed_list_and_a_crash(graft: tuple[GraftServer, Path]) -> None:
    server, _work = graft
    inbox = Inbox()
    async with legacy_session(server.url, server.tokens["bot"], inbox) as (session, _init, _wire):
        await promote(session, "write_note", "change_tools", "crash", "read_note")
        before = inbox.count(LIST_CHANGED)
        r = await session.call_tool("notes__change_tools", {})
        assert not r.is_error, r
        # Graft hears the server's list_changed, reads it again, retires write_note
        await inbox.wait_for(LIST_CHANGED, before + 1)
        names = [t.name for t in (await session.list_tools()).tools]
        assert "notes__write_note" not in names, names
        out = run_cli("tool", "show", "notes__write_note", data_dir=server.data_dir).stdout
        assert "its MCP server no longer lists it" in out, out
        out = run_cli("tool", "show", "notes__extra", data_dir=server.data_dir).stdout
        assert "appeared at run time" in out, out

        # a line that is not JSON-RPC on its stdout is skipped: the call and the next run
        r = await session.call_tool("run_tool", {"vendor": "notes", "name": "garble", "input": {}})
        assert not r.is_error and text(r) == "garbled", r
        r = await session.call_tool("notes__read_note", {"id": "after-garble"})
        assert not r.is_error, r

        # a crash: this call fails clearly, Graft starts the server again by itself (after
        # its backoff), and a later call runs on the new process
        r = await session.call_tool("notes__crash", {})
        assert r.is_error, r
        deadline = time.monotonic() + 10
        while "Graft starts it again" not in server.log_text():
            assert time.monotonic() < deadline, f"no restart was scheduled\n{server.log_tail()}"
            await anyio.sleep(0.1)
        deadline = time.monotonic() + 20
        while True:
            r = await session.call_tool("notes__read_note", {"id": "again"})
            if not r.is_error:
                break
            assert time.monotonic() < deadline, f"the server did not come back: {text(r)}\n{server.log_tail()}"
            await anyio.sleep(0.3)
        assert sc(r)["id"] == "again"


def test_the_log_holds_no_connection_secret(graft: tuple[GraftServer, Path]) -> None:
    """The server printed its token to its stderr, which Graft logs: redacted there."""
    server, _work = graft
    log = server.log_text()
    assert "starting with token" in log, server.log_tail()
    assert SECRET not in log


def test_a_cli_command_leaves_no_process_and_a_cli_change_stops_the_servers_server() -> None:
    with tempfile.TemporaryDirectory(prefix="graft-mcp-cli-") as root:
        data_dir, work, token = setup_graft(Path(root))
        # `graft vendor refresh` starts the server (and the child it starts) and ends both
        (work / "spawn-child-at-start").write_text("yes")
        out = run_cli("vendor", "refresh", "notes", data_dir=data_dir).stdout
        assert "notes" in out, out
        child = int((work / "child.pid").read_text())
        assert not wait_gone([child], timeout=5), f"the CLI left {child} behind"
        (work / "spawn-child-at-start").unlink()
        server = serve(data_dir, Path(root) / "graft.log", {"bot": token})
        try:
            async def started() -> int:
                async with legacy_session(server.url, token) as (session, _init, _wire):
                    r = await session.call_tool("run_tool", {"vendor": "notes", "name": "spawn_child", "input": {}})
                    assert not r.is_error, r
                    return sc(r)["server"]

            pid = anyio.run(started)
            assert pid_alive(pid)
            # disabled from the command line: the running server's process stops too
            run_cli("vendor", "set", "notes", "--disable", data_dir=data_dir)
            assert not wait_gone([pid], timeout=10), f"{pid} still runs\n{server.log_tail()}"
        finally:
            server.stop(timeout=20.0)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
async def test_nothing_is_left_behind_when_graft_exits(sig: signal.Signals) -> None:
    with tempfile.TemporaryDirectory(prefix="graft-mcp-hygiene-") as root:
        data_dir, _work, token = setup_graft(Path(root))
        server = serve(data_dir, Path(root) / "graft.log", {"bot": token})
        try:
            async with legacy_session(server.url, token) as (session, _init, _wire):
                r = await session.call_tool(
                    "run_tool", {"vendor": "notes", "name": "spawn_child", "input": {}}
                )
                assert not r.is_error, r
                pids = sc(r)
            assert pid_alive(pids["server"]) and pid_alive(pids["child"]), pids
            server.proc.send_signal(sig)
            server.proc.wait(timeout=30)
            left = wait_gone([pids["server"], pids["child"]])
            assert not left, f"left behind after {sig.name}: {left}\n{server.log_tail()}"
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()


# --------------------------------------------------------------------------- server-everything

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "tests/conformance/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE = Path(os.environ.get("GRAFT_TEST_NODE", REPO / "tests/conformance/node_modules/node/bin/node"))


def everything_or_skip() -> None:
    if EVERYTHING.exists() and NODE.exists():
        return
    if os.environ.get("GRAFT_CONFORMANCE_REQUIRED") == "1":
        pytest.fail(f"server-everything or Node is missing ({EVERYTHING}, {NODE}): npm ci in tests/conformance")
    pytest.skip("server-everything is not installed (npm ci in tests/conformance)")


async def test_server_everything_over_stdio_and_streamable_http() -> None:
    """The reference server from npm, as a local server (stdio) and as a remote one."""
    everything_or_skip()
    import subprocess

    from conftest import free_port

    with tempfile.TemporaryDirectory(prefix="graft-everything-") as root:
        data_dir = Path(root) / "data"
        data_dir.mkdir()
        port = free_port()
        http = subprocess.Popen(
            [str(NODE), str(EVERYTHING), "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            out = run_cli("vendor", "add", "everything", "--mcp-command", f"{NODE} {EVERYTHING} stdio", data_dir=data_dir).stdout
            assert "new tools" in out, out
            deadline = time.monotonic() + 20
            while True:
                out = run_cli("vendor", "add", "remote", "--mcp-url", f"http://127.0.0.1:{port}/mcp", data_dir=data_dir, check=False)
                if "new tools" in out.stdout:
                    break
                assert time.monotonic() < deadline, out.stdout + out.stderr
                run_cli("vendor", "remove", "remote", "--yes", data_dir=data_dir, check=False)
                time.sleep(0.5)
            token = run_cli("agent", "add", "bot", data_dir=data_dir).stdout.strip().splitlines()[-1].strip()
            server = serve(data_dir, Path(root) / "graft.log", {"bot": token})
            try:
                async with legacy_session(server.url, token) as (session, _init, _wire):
                    for vendor in ["everything", "remote"]:
                        r = await session.call_tool("run_tool", {"vendor": vendor, "name": "echo", "input": {"message": "hi"}})
                        assert not r.is_error and "hi" in text(r), (vendor, r)
                        r = await session.call_tool("run_tool", {"vendor": vendor, "name": "get_sum", "input": {"a": 2, "b": 3}})
                        assert not r.is_error and "5" in text(r), (vendor, r)
                        r = await session.call_tool("run_tool", {"vendor": vendor, "name": "get_tiny_image", "input": {}})
                        assert any(isinstance(c, types.ImageContent) for c in r.content), (vendor, r)
                        seen: list[float] = []

                        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                            seen.append(progress)

                        r = await session.call_tool(
                            "run_tool",
                            {"vendor": vendor, "name": "trigger_long_running_operation", "input": {"duration": 1, "steps": 3}},
                            progress_callback=on_progress,
                        )
                        assert not r.is_error, (vendor, r)
                        with anyio.move_on_after(2):
                            while len(seen) < 3:
                                await anyio.sleep(0.02)
                        assert seen == [1, 2, 3], (vendor, seen)
                    # Graft offers no sampling, elicitation or roots: the server's tools
                    # that need them are not listed
                    hits = await session.call_tool("find_tool", {"query": "trigger a sampling request", "limit": 50})
                    assert "sampling" not in json.dumps(sc(hits)), sc(hits)
                    # the local server's environment holds nothing of Graft's
                    r = await session.call_tool("run_tool", {"vendor": "everything", "name": "get_env", "input": {}})
                    assert not r.is_error, r
                    assert "GRAFT_" not in text(r) and "DATABASE_URL" not in text(r), text(r)
            finally:
                assert server.stop(timeout=20.0) == 0, server.log_tail()
        finally:
            http.kill()
            http.wait()
