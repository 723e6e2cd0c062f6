"""End-to-end test of Graft with the real Python MCP SDK (`mcp` 2.x).

Runs the built `graft` binary (env GRAFT_BIN, default /work/main/target/debug/graft) on a
temporary data dir with the petstore OpenAPI document imported and two agents, A and B,
then drives it over Streamable HTTP with the SDK:

* (a) legacy era (2025-era `initialize` + session + GET stream) through the low-level
  `ClientSession`: meta-tools, find_tool, promote → notifications/tools/list_changed on the
  GET stream → tools/list shows the promoted tool → demote → notice → gone; agent B, connected
  at the same time, gets no notice and never sees A's tool.
* (b) modern era (2026-07-28, stateless: `server/discover`, `subscriptions/listen`) through
  the high-level `mcp.Client`: the same flow with `client.listen(tools_list_changed=True)`.
* (c) errors: unknown promote → isError + tool_not_found; unknown tool name → JSON-RPC
  -32602; no token → HTTP 401 with `WWW-Authenticate: Bearer realm="graft"`.

The server is stopped with SIGTERM at the end and must exit 0 within 10 s.

    python3 -m venv /tmp/graft-venv && /tmp/graft-venv/bin/pip install -r tests/python/requirements.txt
    GRAFT_BIN=target/debug/graft /tmp/graft-venv/bin/pytest -v tests/python
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from conftest import (
    GRAFT_BIN,
    GraftServer,
    Inbox,
    auth,
    legacy_session,
    modern_client,
    run_cli,
    serve,
    spec_path,
)
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

PETSTORE = Path(os.environ.get("GRAFT_PETSTORE_SPEC", "/work/shared/specs/petstore_openapi.yaml"))
if not PETSTORE.exists():  # a checkout with shared/ beside it (as CI lays it out)
    PETSTORE = spec_path("petstore_openapi.yaml")

META_TOOLS = ["find_tool", "promote", "demote", "run_tool", "acquire", "publish"]
LIST_CHANGED = "notifications/tools/list_changed"
MODERN = "2026-07-28"
#: How long to wait for a notice that must come, and to watch for one that must not.
NOTICE_TIMEOUT = 10.0
QUIET_PERIOD = 1.5

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------- server


def _run(*args: str, data_dir: Path) -> str:
    return run_cli(*args, data_dir=data_dir).stdout


def start_graft(root: Path, agents: tuple[str, ...] = ("A", "B")) -> GraftServer:
    """A fresh data dir under `root` with petstore imported and `agents` added, served on a free port."""
    data_dir = root / "data"
    data_dir.mkdir()
    out = _run(
        "import-openapi", str(PETSTORE), "--vendor", "petstore", "--base-url", "http://127.0.0.1:9/anything",
        data_dir=data_dir,
    )
    assert "Vendor petstore, 19 operations: 19 new tools." in out, out
    tokens = {name: _run("agent", "add", name, data_dir=data_dir).strip().splitlines()[-1].strip() for name in agents}
    for name, token in tokens.items():
        assert token and " " not in token, f"no token for agent {name}: {token!r}"
    return serve(data_dir, root / "graft.log", tokens)


@pytest.fixture(scope="module")
def graft() -> Iterator[GraftServer]:
    assert Path(GRAFT_BIN).exists(), f"GRAFT_BIN {GRAFT_BIN} does not exist: build graft first"
    with tempfile.TemporaryDirectory(prefix="graft-pytest-") as root:
        server = start_graft(Path(root))
        try:
            yield server
        finally:
            code = server.stop(timeout=10.0)
            assert code == 0, f"graft exited {code} after SIGTERM\n{server.log_tail()}"


# --------------------------------------------------------------------------- helpers


def names(result: types.ListToolsResult) -> list[str]:
    return [t.name for t in result.tools]


def petstore_hit(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    sc = result.structured_content
    assert isinstance(sc, dict) and isinstance(sc.get("hits"), list), sc
    hits = [h for h in sc["hits"] if h.get("vendor") == "petstore" and "find_pets_by_status" in h.get("name", "")]
    assert hits, f"no petstore find_pets_by_status hit in {sc['hits']!r}"
    return hits[0]


# --------------------------------------------------------------------------- (a) legacy era


async def test_legacy_era_promote_notifies_only_that_agent(graft: GraftServer) -> None:
    a_inbox, b_inbox = Inbox(), Inbox()
    async with (
        legacy_session(graft.url, graft.tokens["A"], a_inbox) as (a, a_init, a_wire),
        legacy_session(graft.url, graft.tokens["B"], b_inbox) as (b, b_init, _b_wire),
    ):
        # initialize: a 2025-era answer with tools.listChanged and instructions naming find_tool
        assert a_init.protocol_version in ("2025-11-25", "2025-06-18"), a_init.protocol_version
        assert a_init.capabilities.tools is not None and a_init.capabilities.tools.list_changed is True
        assert a_init.instructions and "find_tool" in a_init.instructions
        assert a_init.server_info.name == "graft"
        assert b_init.capabilities.tools is not None and b_init.capabilities.tools.list_changed is True
        init_post = next(x for x in a_wire.exchanges if x["rpc"] == "initialize")
        assert init_post["status"] == 200 and init_post["session_id"], init_post

        # tools/list: exactly the three meta-tools, each described
        listed = await a.list_tools()
        assert names(listed) == META_TOOLS
        assert all(t.description for t in listed.tools)
        assert names(await b.list_tools()) == META_TOOLS

        # find_tool
        hit = petstore_hit(await a.call_tool("find_tool", {"query": "pet status"}))
        tool = hit["name"]
        qualified = f"petstore__{tool}"
        assert hit["promoted"] is False and hit["readOnlyHint"] is True, hit

        try:
            # promote → list_changed on A's GET stream
            promoted = await a.call_tool("promote", {"vendor": "petstore", "name": tool})
            assert not promoted.is_error, promoted
            assert promoted.structured_content and promoted.structured_content["size"] == 1, promoted
            await a_inbox.wait_for(LIST_CHANGED, 1)

            listed = await a.list_tools()
            assert names(listed) == [*META_TOOLS, qualified]
            t = listed.tools[-1]
            assert t.annotations is not None and t.annotations.read_only_hint is True, t
            assert t.input_schema.get("type") == "object", t.input_schema

            # B: same server, same moment, another agent: nothing of A's
            assert names(await b.list_tools()) == META_TOOLS
            assert petstore_hit(await b.call_tool("find_tool", {"query": "pet status"}))["promoted"] is False
            assert petstore_hit(await a.call_tool("find_tool", {"query": "pet status"}))["promoted"] is True
        finally:
            demoted = await a.call_tool("demote", {"vendor": "petstore", "name": tool})
        assert not demoted.is_error, demoted
        assert demoted.structured_content and demoted.structured_content["size"] == 0, demoted
        await a_inbox.wait_for(LIST_CHANGED, 2)
        assert names(await a.list_tools()) == META_TOOLS

        await anyio.sleep(QUIET_PERIOD)
        assert a_inbox.count(LIST_CHANGED) == 2, a_inbox.messages
        assert b_inbox.count(LIST_CHANGED) == 0, b_inbox.messages
        assert not a_inbox.errors() and not b_inbox.errors(), (a_inbox.errors(), b_inbox.errors())


# --------------------------------------------------------------------------- (b) modern era


async def test_modern_era_listen_gets_only_own_changes(graft: GraftServer) -> None:
    a_inbox, b_inbox = Inbox(), Inbox()
    async with (
        modern_client(graft.url, graft.tokens["A"], a_inbox) as (a, a_wire),
        modern_client(graft.url, graft.tokens["B"], b_inbox) as (b, _b_wire),
    ):
        # auto mode probed server/discover and stayed modern: no initialize, no session
        assert a.protocol_version == MODERN, a.protocol_version
        assert b.protocol_version == MODERN, b.protocol_version
        assert a_wire.exchanges and a_wire.exchanges[0]["rpc"] == "server/discover", a_wire.exchanges
        assert a_wire.exchanges[0]["status"] == 200, a_wire.exchanges[0]
        assert a.session.discover_result is not None and a.session.initialize_result is None
        assert a.server_capabilities.tools is not None and a.server_capabilities.tools.list_changed is True
        assert a.instructions and "find_tool" in a.instructions

        assert names(await a.list_tools()) == META_TOOLS
        assert names(await b.list_tools()) == META_TOOLS
        hit = petstore_hit(await a.call_tool("find_tool", {"query": "pet status"}))
        tool = hit["name"]
        qualified = f"petstore__{tool}"
        assert hit["promoted"] is False, hit

        b_events: list[Any] = []
        async with (
            a.listen(tools_list_changed=True) as a_sub,
            b.listen(tools_list_changed=True) as b_sub,
            anyio.create_task_group() as tg,
        ):
            assert a_sub.honored.tools_list_changed is True, a_sub.honored
            assert b_sub.honored.tools_list_changed is True, b_sub.honored

            async def watch_b() -> None:
                async for event in b_sub:
                    b_events.append(event)

            tg.start_soon(watch_b)
            a_events = aiter(a_sub)

            try:
                promoted = await a.call_tool("promote", {"vendor": "petstore", "name": tool})
                assert not promoted.is_error, promoted
                with anyio.fail_after(NOTICE_TIMEOUT):
                    event = await anext(a_events)
                assert isinstance(event, ToolsListChanged), event

                # the default client cache honours ttlMs: 0, so this re-reads the list
                listed = await a.list_tools()
                assert names(listed) == [*META_TOOLS, qualified]
                t = listed.tools[-1]
                assert t.annotations is not None and t.annotations.read_only_hint is True, t
                assert names(await b.list_tools()) == META_TOOLS
            finally:
                demoted = await a.call_tool("demote", {"vendor": "petstore", "name": tool})
            assert not demoted.is_error, demoted
            with anyio.fail_after(NOTICE_TIMEOUT):
                event = await anext(a_events)
            assert isinstance(event, ToolsListChanged), event
            assert names(await a.list_tools()) == META_TOOLS

            await anyio.sleep(QUIET_PERIOD)
            assert b_events == [], b_events
            tg.cancel_scope.cancel()

        assert b_inbox.count(LIST_CHANGED) == 0, b_inbox.messages
        # stateless: Graft minted no Mcp-Session-Id for the modern client
        assert all(x["session_id"] is None for x in a_wire.exchanges), a_wire.exchanges


# --------------------------------------------------------------------------- (c) errors


async def test_errors_legacy_era(graft: GraftServer) -> None:
    async with legacy_session(graft.url, graft.tokens["A"], Inbox()) as (a, _init, _wire):
        result = await a.call_tool("promote", {"vendor": "petstore", "name": "no_such_tool"})
        assert result.is_error is True, result
        assert result.structured_content and result.structured_content["error"]["code"] == "tool_not_found", result

        with pytest.raises(MCPError) as err:
            await a.call_tool("nope__x", {})
        assert err.value.code == types.INVALID_PARAMS == -32602, err.value.error


async def test_errors_modern_era(graft: GraftServer) -> None:
    async with modern_client(graft.url, graft.tokens["A"]) as (a, _wire):
        assert a.protocol_version == MODERN
        result = await a.call_tool("promote", {"vendor": "petstore", "name": "no_such_tool"})
        assert result.is_error is True, result
        assert result.structured_content and result.structured_content["error"]["code"] == "tool_not_found", result

        with pytest.raises(MCPError) as err:
            await a.call_tool("nope__x", {})
        assert err.value.code == -32602, err.value.error


async def test_requests_without_a_valid_token_get_401(graft: GraftServer) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=10.0) as http:
        r = await http.post(graft.url, json=initialize, headers=headers)
        assert r.status_code == 401, (r.status_code, r.text)
        assert 'Bearer realm="graft"' in r.headers.get("www-authenticate", ""), r.headers

        r = await http.post(graft.url, json=initialize, headers={**headers, **auth("graft_not_a_real_token")})
        assert r.status_code == 401, (r.status_code, r.text)
        challenge = r.headers.get("www-authenticate", "")
        assert 'Bearer realm="graft"' in challenge and 'error="invalid_token"' in challenge, challenge

        discover = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
        r = await http.post(
            graft.url,
            json=discover,
            headers={**headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
        )
        assert r.status_code == 401, (r.status_code, r.text)
        assert 'Bearer realm="graft"' in r.headers.get("www-authenticate", ""), r.headers


# --------------------------------------------------------------------------- shutdown


async def test_sigterm_with_open_streams_exits_zero(tmp_path: Path) -> None:
    """SIGTERM while a legacy GET stream and a modern listen stream are open: exit 0 within 10 s."""
    server = start_graft(tmp_path, agents=("A",))
    try:
        async with (
            legacy_session(server.url, server.tokens["A"], Inbox()),
            modern_client(server.url, server.tokens["A"]) as (client, _wire),
            client.listen(tools_list_changed=True) as sub,
        ):
            assert sub.honored.tools_list_changed is True
            server.proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            code = await anyio.to_thread.run_sync(lambda: _wait(server.proc, 10.0))
            assert code == 0, f"graft exited {code} after SIGTERM\n{server.log_tail()}"
            assert time.monotonic() - started < 10.0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


# --------------------------------------------------------------------------- agent lifecycle (issue 28.1)


async def _initialize_status(url: str, token: str) -> int:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **auth(token)}
    async with httpx2.AsyncClient(timeout=10.0) as http:
        return (await http.post(url, json=initialize, headers=headers)).status_code


async def _becomes(url: str, token: str, status: int, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while (got := await _initialize_status(url, token)) != status:
        assert time.monotonic() < deadline, f"still {got}, not {status}, after {within} s"
        await anyio.sleep(0.2)


async def test_the_cli_disables_enables_and_rotates_an_agent_under_a_running_server(tmp_path: Path) -> None:
    """`graft agent disable|enable|rotate` from another process reach the running server."""
    server = start_graft(tmp_path, agents=("A", "B"))
    try:
        token, data_dir = server.tokens["A"], server.data_dir
        await _becomes(server.url, token, 200)
        out = _run("agent", "disable", "A", data_dir=data_dir)
        assert "Agent A is disabled" in out, out
        await _becomes(server.url, token, 401)
        assert await _initialize_status(server.url, server.tokens["B"]) == 200
        listed = _run("agent", "list", data_dir=data_dir)
        assert any(line.startswith("A ") and "(disabled)" in line for line in listed.splitlines()), listed
        assert "Agent A is enabled" in _run("agent", "enable", "A", data_dir=data_dir)
        await _becomes(server.url, token, 200)
        new = _run("agent", "rotate", "A", data_dir=data_dir).strip().splitlines()[-1].strip()
        assert new.startswith("graft_") and new != token, new
        await _becomes(server.url, token, 401)
        assert await _initialize_status(server.url, new) == 200
        failed = run_cli("agent", "disable", "nobody", data_dir=data_dir, check=False)
        assert failed.returncode != 0 and "nobody" in failed.stderr, failed
    finally:
        code = server.stop(timeout=10.0)
        assert code == 0, f"graft exited {code}\n{server.log_tail()}"
