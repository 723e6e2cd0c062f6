"""Shared harness of the Python SDK tests: running the `graft` binary (CLI and server) and
connecting to it with the real `mcp` SDK in both eras.

    GRAFT_BIN   the binary (default <repo>/target/debug/graft)
    specs       /work/shared/specs, or shared/specs beside the checkout (as CI lays it out)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import mcp_types as types
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

GRAFT_BIN = os.path.abspath(
    os.environ.get("GRAFT_BIN", str(Path(__file__).resolve().parents[2] / "target" / "debug" / "graft"))
)
NOTICE_TIMEOUT = 10.0


def spec_path(name: str) -> Path:
    """A shared API document: /work/shared/specs, else shared/specs beside the checkout."""
    path = Path("/work/shared/specs") / name
    if not path.exists():
        path = Path(__file__).resolve().parents[3] / "shared" / "specs" / name
    return path


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------- processes


@dataclass
class GraftServer:
    proc: subprocess.Popen[bytes]
    data_dir: Path
    base: str
    tokens: dict[str, str]
    log_path: Path

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:]) or "(no log)"

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then wait up to `timeout` s; returns the exit code (kills and fails on timeout)."""
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"graft did not exit within {timeout} s of SIGTERM\n{self.log_tail()}")


def graft_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment without the caller's GRAFT_* settings (RUST_LOG=info unless set)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAFT_") and k != "DATABASE_URL"}
    env.setdefault("RUST_LOG", "info")
    # the tests' vendors (httpbin, the echo servers) listen on loopback
    env["GRAFT_VENDOR_LOOPBACK"] = "allow"
    env.update(extra or {})
    return env


def run_cli(
    *args: str,
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """`graft --data-dir DATA_DIR ARGS…`; fails the test on a non-zero exit when `check`."""
    out = subprocess.run(
        [GRAFT_BIN, "--data-dir", str(data_dir), *args],
        env=graft_env(env),
        cwd=data_dir,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert out.returncode == 0, f"graft {' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen[bytes], base: str, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            r = httpx2.get(f"{base}/healthz", timeout=2.0)
            if r.status_code == 200 and r.json().get("status") == "ok":
                return True
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    return False


def serve(
    data_dir: Path,
    log_path: Path,
    tokens: dict[str, str],
    env: Mapping[str, str] | None = None,
    public_url: bool = False,
) -> GraftServer:
    """`graft serve` on a free port with stdout and stderr appended to `log_path`; with
    `public_url`, that address is also its GRAFT_PUBLIC_URL (OAuth binds tokens to it)."""
    last_error = ""
    for _attempt in range(3):  # the port found free may be taken again before graft binds it
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        extra = dict(env or {})
        if public_url:
            extra["GRAFT_PUBLIC_URL"] = base
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [GRAFT_BIN, "--data-dir", str(data_dir), "serve", "--addr", f"127.0.0.1:{port}"],
                env=graft_env(extra),
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = GraftServer(proc, data_dir, base, tokens, log_path)
        if wait_healthy(proc, base):
            return server
        last_error = server.log_tail()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    raise RuntimeError(f"graft did not become healthy:\n{last_error}")


# --------------------------------------------------------------------------- MCP clients


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Inbox:
    """A `message_handler` that records what the session hands it (notifications, transport errors)."""

    messages: list[Any] = field(default_factory=list)

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)
        await anyio.lowlevel.checkpoint()

    def count(self, method: str) -> int:
        return sum(1 for m in self.messages if getattr(m, "method", None) == method)

    def errors(self) -> list[Exception]:
        return [m for m in self.messages if isinstance(m, Exception)]

    async def wait_for(self, method: str, n: int, timeout: float = NOTICE_TIMEOUT) -> None:
        try:
            with anyio.fail_after(timeout):
                while self.count(method) < n:
                    await anyio.sleep(0.02)
        except TimeoutError:
            pytest.fail(f"expected {n} {method} within {timeout} s, got {self.count(method)}: {self.messages!r}")


@dataclass
class Wire:
    """httpx2 event hooks recording every HTTP exchange (method, status, JSON-RPC method, headers)."""

    exchanges: list[dict[str, Any]] = field(default_factory=list)
    get_stream_open: anyio.Event = field(default_factory=anyio.Event)

    async def on_response(self, response: httpx2.Response) -> None:
        req = response.request
        rpc_method = None
        if req.method == "POST":
            try:
                rpc_method = json.loads(req.content).get("method")
            except (ValueError, AttributeError, httpx2.RequestNotRead):
                pass
        self.exchanges.append(
            {
                "method": req.method,
                "rpc": rpc_method,
                "status": response.status_code,
                "content_type": response.headers.get("content-type", ""),
                "session_id": response.headers.get("mcp-session-id"),
                "protocol_header": req.headers.get("mcp-protocol-version"),
            }
        )
        if req.method == "GET" and response.status_code == 200:
            self.get_stream_open.set()

    def http_client(self, token: str) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=auth(token),
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"response": [self.on_response]},
        )


@asynccontextmanager
async def legacy_session(
    url: str, token: str, inbox: Inbox | None = None
) -> AsyncIterator[tuple[ClientSession, types.InitializeResult, Wire]]:
    """A 2025-era session: initialize, then wait until the SDK's GET stream is open (notices go there)."""
    wire = Wire()
    async with wire.http_client(token) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, message_handler=inbox if inbox is not None else Inbox()) as session:
                init = await session.initialize()
                try:
                    with anyio.fail_after(10):
                        await wire.get_stream_open.wait()
                except TimeoutError:
                    pytest.fail(f"the SDK's GET stream did not open: {wire.exchanges!r}")
                yield session, init, wire


@asynccontextmanager
async def modern_client(url: str, token: str, inbox: Inbox | None = None) -> AsyncIterator[tuple[Client, Wire]]:
    """The high-level `mcp.Client` in its default mode ("auto": server/discover first)."""
    wire = Wire()
    async with wire.http_client(token) as http:
        async with Client(streamable_http_client(url, http_client=http), message_handler=inbox) as client:
            yield client, wire
