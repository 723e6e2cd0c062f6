"""Running tools through Graft against a REAL vendor stand-in, with the Python MCP SDK as the agent.

httpbin (PyPI `httpbin`, Flask/Werkzeug) runs on 127.0.0.1 and a free port; its `/anything`
echo answers what Graft sent (method, url, args, form, json, headers), and a record kept by
the process that runs it (one line per request as it arrives, header values hashed) tells
what reached it at all, and that the real credential did. Graft imports the shared documents of
Petstore, Stripe, Twilio and Slack with their base URL on `/anything`, and httpbin's own
document for `/status` and `/delay`; each vendor gets a connection made with the CLI:

    petstore  header api_key      stripe  bearer      twilio  basic (AccountSid:secret)
    slack     bearer (Slack's `token` parameters are ordinary inputs: its document
              names no scheme for them, issue 25.2)
    httpbin   query key (a secret with `+`, `/` and `=`, so its encoded forms matter)

Graft redacts every credential from what the agent gets back, the vendor's echo included,
so the echoed credential must read `<redacted>` in the header or parameter that carried it.
Checked here, in the spirit of tests/api/run.rs:

* reads with each kind of credential; Stripe form bodies with `metadata[...]` nesting;
  Twilio's two path parameters; Slack's `token` header as the agent's input; a query
  credential; inputs a tool does not declare refused;
* path values that would leave their segment → `invalid_input`, nothing sent;
* `/status/500` → `vendor_error` 500; `/drip` and `/delay/3` past GRAFT_REQUEST_TIMEOUT=2s
  → `vendor_unreachable`;
* dry runs: a POST sends nothing and previews the request redacted; a GET is sent;
* approvals: the first write → `approval_required`, nothing sent; `graft approve`; the retry
  is sent; demote + promote asks nothing again; `graft deny` → `approval_denied`;
* `run_tool` of a tool not promoted answers exactly as the promoted tool's first-class call
  (through the modern `mcp.Client`);
* no secret (raw, URL-encoded, Basic base64) in any MCP answer, any CLI output, graft's own
  log at RUST_LOG=debug, or the bytes of graft.db / graft.db-wal.

    GRAFT_BIN=target/debug/graft /tmp/graft-venv/bin/pytest -v tests/python/test_run_tools.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

import httpx2
import mcp_types as types
import pytest
from conftest import (
    GRAFT_BIN,
    GraftServer,
    free_port,
    legacy_session,
    modern_client,
    run_cli,
    serve,
    spec_path,
)

pytestmark = pytest.mark.anyio

SECRET = "sk_test_S3CRET_value-123"
#: the query connection's secret: `+`, `/` and `=` differ in every encoding of a URL
QUERY_SECRET = "qk_S3CRET+v/al=ue"
ACCOUNT = "AC0123456789abcdef0123456789abcdef"
ADDRESS = "AD0123456789abcdef0123456789abcdef"
BASIC_SECRET = f"{ACCOUNT}:{SECRET}"
#: in every secret, so a form of one that no rule below foresaw still shows
MARK = "S3CRET"
REDACTED = "<redacted>"
TIMEOUT = "2s"

#: (file, vendor slug, base path on httpbin)
SPECS = [
    ("petstore_openapi.yaml", "petstore", "/anything"),
    ("stripe_spec3_2023-09.yaml", "stripe", "/anything"),
    ("twilio_api_v2010.json", "twilio", "/anything"),
    ("slack_web_openapi_v2.json", "slack", "/anything"),
    ("httpbin_0.10.2_local_spec.json", "httpbin", ""),
]


def secret_forms() -> list[str]:
    """Every spelling of a secret that must never be shown."""
    forms = {MARK}
    for s in (SECRET, QUERY_SECRET, BASIC_SECRET):
        forms |= {s, quote(s, safe=""), quote_plus(s), quote(s, safe="").lower(), quote_plus(s).lower(), json.dumps(s)[1:-1]}
        forms.add(base64.b64encode(s.encode()).decode())
    return sorted(forms)


def leak_report(what: str, text: str) -> str:
    """Empty when `text` holds no form of a secret, else what and where."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # graft colours its log even into a file
    leaks = [f for f in secret_forms() if f in text]
    if not leaks:
        return ""
    lines = [line for line in text.splitlines() if any(f in line for f in leaks)]
    return f"{what} shows the secret as {leaks} in {len(lines)} lines, e.g.:\n" + "\n".join(lines[:3])[:3000]


# --------------------------------------------------------------------------- httpbin


#: httpbin's app on Werkzeug's threaded server, as `python -m httpbin.core` runs it, with two
#: additions for the test:
#: - every request is recorded as it arrives, one JSON line in the file argv[3]: method, raw
#:   URI and a SHA-256 of each header value (so the test can tell the real credential
#:   arrived without the record holding it in the clear);
#: - headers with `_` in their name (Petstore's `api_key`) are kept: Werkzeug drops them (a
#:   guard against `X_Forwarded_For`-style spoofing), so httpbin could not echo them at all.
HTTPBIN_MAIN = """
import hashlib, json, sys
from httpbin import app
from werkzeug.serving import WSGIRequestHandler, run_simple

record = open(sys.argv[3], "a", buffering=1)

class Handler(WSGIRequestHandler):
    def make_environ(self):
        environ = super().make_environ()
        for key, value in self.headers.items():
            if "_" in key:
                environ["HTTP_" + key.upper().replace("-", "_")] = value
        return environ

def recorded(environ, start_response):
    headers = {
        k[5:].lower().replace("_", "-"): hashlib.sha256(v.encode("latin-1")).hexdigest()
        for k, v in environ.items() if k.startswith("HTTP_")
    }
    line = {"method": environ["REQUEST_METHOD"], "uri": environ["RAW_URI"], "headers": headers}
    record.write(json.dumps(line) + "\\n")
    return app(environ, start_response)

run_simple(sys.argv[1], int(sys.argv[2]), recorded, threaded=True, request_handler=Handler)
"""


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@dataclass
class Seen:
    """A request as it reached httpbin."""

    method: str
    uri: str
    headers: dict[str, str]  # lower-case name → SHA-256 of the value

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.uri).query, keep_blank_values=True)


@dataclass
class HttpBin:
    proc: subprocess.Popen[bytes]
    base: str
    log_path: Path  # Werkzeug's banner and access log
    record_path: Path

    def requests(self) -> list[Seen]:
        """Every request that reached httpbin, in order of arrival."""
        lines = self.record_path.read_text().splitlines() if self.record_path.exists() else []
        return [Seen(**json.loads(line)) for line in lines if line.strip()]

    def mark(self) -> int:
        return len(self.requests())

    def since(self, mark: int) -> list[Seen]:
        return self.requests()[mark:]

    def last(self) -> Seen:
        return self.requests()[-1]


def start_httpbin(root: Path) -> HttpBin:
    log_path, record_path = root / "httpbin.log", root / "httpbin-requests.jsonl"
    last = ""
    for _attempt in range(3):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-c", HTTPBIN_MAIN, "127.0.0.1", str(port), str(record_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={"PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx2.get(f"{base}/get", timeout=2.0).status_code == 200:
                    return HttpBin(proc, base, log_path, record_path)
            except httpx2.HTTPError:
                pass
            time.sleep(0.1)
        last = log_path.read_text(errors="replace")[-3000:]
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    raise RuntimeError(f"httpbin did not start:\n{last}")


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    graft: GraftServer
    httpbin: HttpBin
    root: Path
    #: every CLI output and every MCP answer, for the secrets check
    transcript: list[str] = field(default_factory=list)

    @property
    def data_dir(self) -> Path:
        return self.graft.data_dir

    def cli(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None, check: bool = True) -> str:
        out = run_cli(*args, data_dir=self.data_dir, stdin=stdin, env=env, check=check)
        self.transcript.append(f"$ graft {' '.join(args)}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def record(self, result: types.CallToolResult) -> types.CallToolResult:
        self.transcript.append(result.model_dump_json(by_alias=True))
        return result


def setup_world(root: Path, bin_: HttpBin) -> tuple[Path, dict[str, str], list[str]]:
    """Imports, connections and agents through the CLI; returns (data dir, tokens, CLI transcript)."""
    data_dir = root / "data"
    data_dir.mkdir()
    transcript: list[str] = []

    def cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        out = run_cli(*args, data_dir=data_dir, stdin=stdin, env=env)
        transcript.append(f"$ graft {' '.join(args)}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    for file, slug, path in SPECS:
        out = cli("import-openapi", str(spec_path(file)), "--vendor", slug, "--base-url", f"{bin_.base}{path}")
        assert f"Vendor {slug}," in out and "new tools" in out, out

    # the secrets come from the environment or standard input, never the command line
    cli("connection", "add", "petstore", "--label", "main", "--kind", "header", "--name", "api_key",
        "--secret-env", "PETSTORE_KEY", env={"PETSTORE_KEY": SECRET})
    cli("connection", "add", "stripe", "--label", "test", "--kind", "bearer", "--secret-stdin", stdin=SECRET + "\n")
    cli("connection", "add", "twilio", "--label", "main", "--kind", "basic", "--secret-stdin", stdin=BASIC_SECRET + "\n")
    cli("connection", "add", "slack", "--label", "bot", "--kind", "bearer", "--secret-env", "SLACK_TOKEN",
        env={"SLACK_TOKEN": SECRET})
    cli("connection", "add", "httpbin", "--label", "keyed", "--kind", "query", "--name", "key", "--secret-stdin",
        stdin=QUERY_SECRET + "\n")
    listed = cli("connection", "list")
    for slug, kind in [("petstore", "header"), ("stripe", "bearer"), ("twilio", "basic"), ("slack", "bearer"), ("httpbin", "query")]:
        assert re.search(rf"\b{slug}\s+\S+\s+{kind}\b.*active", listed), listed

    tokens = {name: cli("agent", "add", name).strip().splitlines()[-1].strip() for name in ("alpha", "beta")}
    return data_dir, tokens, transcript


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    assert Path(GRAFT_BIN).exists(), f"GRAFT_BIN {GRAFT_BIN} does not exist: build graft first"
    with tempfile.TemporaryDirectory(prefix="graft-run-") as tmp:
        root = Path(tmp)
        bin_ = start_httpbin(root)
        server = None
        try:
            data_dir, tokens, transcript = setup_world(root, bin_)
            server = serve(data_dir, root / "graft.log", tokens, env={"RUST_LOG": "debug", "GRAFT_REQUEST_TIMEOUT": TIMEOUT})
            w = World(server, bin_, root, transcript)
            yield w
            code = server.stop(timeout=10.0)
            assert code == 0, f"graft exited {code} after SIGTERM\n{server.log_tail()}"
        finally:
            if server is not None and server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
            bin_.proc.terminate()
            try:
                bin_.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                bin_.proc.kill()
                bin_.proc.wait()


# --------------------------------------------------------------------------- helpers


def code(r: types.CallToolResult) -> str | None:
    sc = r.structured_content or {}
    return (sc.get("error") or {}).get("code") if isinstance(sc, dict) else None


def text(r: types.CallToolResult) -> str:
    return "\n".join(c.text for c in r.content if isinstance(c, types.TextContent))


def ok(r: types.CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call."""
    assert r.is_error is not True, f"{code(r)}: {text(r)}"
    assert isinstance(r.structured_content, dict), r
    return r.structured_content


def error(r: types.CallToolResult, expected: str) -> dict[str, Any]:
    """`structuredContent.error` of a tool error with code `expected`."""
    assert r.is_error is True and code(r) == expected, f"expected {expected}, got {code(r)}: {text(r)}"
    return r.structured_content["error"]


def headers(echo: dict[str, Any]) -> dict[str, str]:
    """httpbin's echoed headers, with lower-case names."""
    return {k.lower(): v for k, v in echo["headers"].items()}


async def run(w: World, session: Any, vendor: str, name: str, input: dict[str, Any], dry_run: bool | None = None) -> types.CallToolResult:
    args: dict[str, Any] = {"vendor": vendor, "name": name, "input": input}
    if dry_run is not None:
        args["dryRun"] = dry_run
    return w.record(await session.call_tool("run_tool", args))


def tool_names(w: World, query: str) -> list[str]:
    """`graft tool search QUERY` as VENDOR__NAME list."""
    out = w.cli("tool", "search", query, "--limit", "50")
    return [line.split()[0] for line in out.splitlines() if "__" in line.split(" ", 1)[0]]


def no_request(bin_: HttpBin, mark: int, needle: str) -> None:
    sent = [(r.method, r.uri) for r in bin_.since(mark) if needle in r.uri]
    assert not sent, f"reached httpbin: {sent}"


# --------------------------------------------------------------------------- reads


async def test_reads_carry_each_kind_of_credential(world: World) -> None:
    w, base = world, world.httpbin.base
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        # Petstore: the api_key header connection
        echo = ok(await run(w, s, "petstore", "find_pets_by_status", {"status": "sold"}))
        assert echo["method"] == "GET"
        assert echo["url"] == f"{base}/anything/pet/findByStatus?status=sold"
        assert echo["args"] == {"status": "sold"}
        h = headers(echo)
        assert h["api-key"] == REDACTED, h
        assert "authorization" not in h, "the agent's own Authorization never reaches a vendor"
        assert h["accept"] == "application/json"
        assert w.httpbin.last().headers["api-key"] == digest(SECRET), "the real secret reached the vendor"

        # Twilio: AccountSid declared at path level, Sid at operation level; Basic auth
        assert "twilio__fetch_address" in tool_names(w, "twilio address")
        echo = ok(await run(w, s, "twilio", "fetch_address", {"AccountSid": ACCOUNT, "Sid": ADDRESS}))
        assert echo["url"] == f"{base}/anything/2010-04-01/Accounts/{ACCOUNT}/Addresses/{ADDRESS}.json"
        assert headers(echo)["authorization"] == f"Basic {REDACTED}", echo["headers"]
        basic = base64.b64encode(BASIC_SECRET.encode()).decode()
        assert w.httpbin.last().headers["authorization"] == digest(f"Basic {basic}")
        # an invalid SID never leaves Graft
        mark = w.httpbin.mark()
        e = error(await run(w, s, "twilio", "fetch_address", {"AccountSid": "AC123", "Sid": ADDRESS}), "invalid_input")
        assert [v["pointer"] for v in e["violations"]] == ["/AccountSid"] * len(e["violations"]), e
        no_request(w.httpbin, mark, "/Addresses/")

        # Slack: conversations.list declares `token` as an ordinary query parameter; the
        # bearer connection goes in the Authorization header only, never in the URL
        assert "slack__conversations_list" in tool_names(w, "slack conversations list")
        echo = ok(await run(w, s, "slack", "conversations_list", {"limit": 5}))
        assert echo["method"] == "GET" and echo["url"].startswith(f"{base}/anything/conversations.list?")
        assert echo["args"] == {"limit": "5"}, echo["args"]
        assert headers(echo)["authorization"] == f"Bearer {REDACTED}"
        seen = w.httpbin.last()
        assert seen.query == {"limit": ["5"]}, seen
        assert seen.headers["authorization"] == digest(f"Bearer {SECRET}")

        # a query connection (`key`), on httpbin's own document: /anything/{anything}
        assert "httpbin__get_anything_anything" in tool_names(w, "httpbin anything")
        echo = ok(await run(w, s, "httpbin", "get_anything_anything", {"anything": "items a"}))
        assert echo["url"].startswith(f"{base}/anything/items%20a?"), echo["url"]
        assert echo["args"] == {"key": REDACTED}, echo["args"]
        assert "authorization" not in headers(echo)
        assert w.httpbin.last().query == {"key": [QUERY_SECRET]}
        # an input the document does not declare is refused, not appended to the URL
        mark = w.httpbin.mark()
        e = error(await run(w, s, "httpbin", "get_anything_anything", {"anything": "x", "tag": ["y"]}), "invalid_input")
        assert [v["pointer"] for v in e["violations"]] == ["/tag"], e
        assert w.httpbin.since(mark) == [], "nothing reached httpbin"


async def test_a_query_credential_echoed_in_the_vendor_url_is_redacted(world: World) -> None:
    """httpbin echoes the URL as Werkzeug re-quotes it (`/` left bare, `+` and `=` encoded),
    which is neither the raw secret nor its form encoding: it must still read `<redacted>`."""
    w, base = world, world.httpbin.base
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        r = await run(w, s, "httpbin", "get_anything", {})
        echo = ok(r)
        assert echo["args"] == {"key": REDACTED}, echo["args"]
        assert echo["url"] == f"{base}/anything?key={REDACTED}", echo["url"]
        assert MARK not in text(r), text(r)


async def test_path_values_cannot_leave_their_segment(world: World) -> None:
    w = world
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        mark = w.httpbin.mark()
        for bad in ["../../admin", "..", "%2e%2e", "%2E%2E%2Fadmin", "a/b", "a%2fb", "x?y", "a#b", "a\\b"]:
            r = await run(w, s, "httpbin", "get_anything_anything", {"anything": bad})
            error(r, "invalid_input")
            assert "path parameter" in text(r), text(r)
        # Petstore's integer petId is refused by its schema, with the pointer
        e = error(await run(w, s, "petstore", "get_pet_by_id", {"petId": "../1"}), "invalid_input")
        assert e["violations"] and e["violations"][0]["pointer"] == "/petId", e
        assert w.httpbin.since(mark) == [], "nothing reached httpbin"
        # a value that stays in its segment is percent-encoded and sent
        echo = ok(await run(w, s, "httpbin", "get_anything_anything", {"anything": "a b.txt"}))
        assert echo["url"].startswith(f"{w.httpbin.base}/anything/a%20b.txt?"), echo["url"]


async def test_stripe_form_bodies_and_slack_token_header_after_approval(world: World) -> None:
    w, base = world, world.httpbin.base
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        customer = {"email": "a@b.test", "metadata": {"order": "42", "tier": "gold"}}
        # a dry run of a write: a redacted preview, nothing sent, no approval asked
        mark = w.httpbin.mark()
        preview = ok(await run(w, s, "stripe", "post_customers", customer, dry_run=True))
        assert preview["dryRun"] is True, preview
        req = preview["request"]
        assert req["method"] == "POST" and req["url"] == f"{base}/anything/v1/customers", req
        assert req["headers"]["Authorization"] == f"Bearer {REDACTED}", req
        assert req["headers"]["Content-Type"] == "application/x-www-form-urlencoded", req
        assert req["body"] == "email=a%40b.test&metadata%5Border%5D=42&metadata%5Btier%5D=gold", req
        assert "stripe__post_customers" not in w.cli("approval", "list"), "a dry run asks no approval"

        # the real call: approval first, then the form body with Stripe's nesting
        e = error(await run(w, s, "stripe", "post_customers", customer), "approval_required")
        assert "graft approve alpha stripe__post_customers" in e["tellUser"], e
        no_request(w.httpbin, mark, "/v1/customers")
        w.cli("approve", "alpha", "stripe__post_customers")
        echo = ok(await run(w, s, "stripe", "post_customers", customer))
        assert echo["method"] == "POST" and echo["url"] == f"{base}/anything/v1/customers"
        assert echo["form"] == {"email": "a@b.test", "metadata[order]": "42", "metadata[tier]": "gold"}, echo["form"]
        assert echo["json"] is None
        h = headers(echo)
        assert h["content-type"] == "application/x-www-form-urlencoded" and h["authorization"] == f"Bearer {REDACTED}", h
        assert w.httpbin.last().headers["authorization"] == digest(f"Bearer {SECRET}")
        # Stripe declares a body on GET /v1/customers: it goes to the query string
        echo = ok(await run(w, s, "stripe", "get_customers", {"limit": 3, "email": "a@b.test"}))
        assert echo["method"] == "GET" and echo["args"] == {"limit": "3", "email": "a@b.test"}, echo
        assert echo["data"] == "" and echo["form"] == {}

        # Slack's chat.postMessage declares a required `token` header as an ordinary
        # parameter (issue 25.2): the agent's value goes there, the connection's bearer
        # token in Authorization, and the secret nowhere else
        assert "slack__chat_post_message" in tool_names(w, "slack post message")
        found = ok(w.record(await s.call_tool("find_tool", {"query": "slack post message"})))
        assert any(h["name"] == "chat_post_message" for h in found["hits"]), found
        w.record(await s.call_tool("promote", {"vendor": "slack", "name": "chat_post_message"}))
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert "token" in tools["slack__chat_post_message"].input_schema["properties"]
        message = {"channel": "C0123", "text": "hi there", "token": "agent-given"}
        mark = w.httpbin.mark()
        error(w.record(await s.call_tool("slack__chat_post_message", message)), "approval_required")
        no_request(w.httpbin, mark, "chat.postMessage")
        w.cli("approve", "alpha", "slack__chat_post_message")
        echo = ok(w.record(await s.call_tool("slack__chat_post_message", message)))
        assert echo["url"] == f"{base}/anything/chat.postMessage"
        assert echo["form"] == {"channel": "C0123", "text": "hi there"}, echo["form"]
        h = headers(echo)
        assert h["token"] == "agent-given" and h["authorization"] == f"Bearer {REDACTED}", h
        seen = w.httpbin.last()
        assert seen.headers["token"] == digest("agent-given") and seen.headers["authorization"] == digest(f"Bearer {SECRET}")
        assert seen.query == {}, seen
        w.record(await s.call_tool("demote", {"vendor": "slack", "name": "chat_post_message"}))


# --------------------------------------------------------------------------- dry runs


async def test_dry_runs_preview_writes_and_send_reads(world: World) -> None:
    w, base = world, world.httpbin.base
    async with legacy_session(w.graft.url, w.graft.tokens["beta"]) as (s, _init, _wire):
        mark = w.httpbin.mark()
        previews = [
            ok(await run(w, s, "twilio", "create_account", {"FriendlyName": "sub one"}, dry_run=True)),
            ok(await run(w, s, "petstore", "add_pet", {"name": "rex", "photoUrls": ["u"]}, dry_run=True)),
            ok(await run(w, s, "httpbin", "post_anything_anything", {"anything": "hook"}, dry_run=True)),
            ok(await run(w, s, "slack", "chat_post_message", {"channel": "C1", "text": "x", "token": "t-1"}, dry_run=True)),
        ]
        assert w.httpbin.since(mark) == [], f"a dry run of a write sent {w.httpbin.since(mark)}"
        assert all(p["dryRun"] is True for p in previews), previews
        twilio, pet, hook, slack = (p["request"] for p in previews)
        assert twilio["method"] == "POST" and twilio["url"] == f"{base}/anything/2010-04-01/Accounts.json"
        assert twilio["headers"]["Authorization"] == f"Basic {REDACTED}", twilio
        assert twilio["body"] == "FriendlyName=sub+one", twilio
        assert pet["headers"]["api_key"] == REDACTED and pet["body"] == {"name": "rex", "photoUrls": ["u"]}, pet
        assert hook["url"] == f"{base}/anything/hook?key={REDACTED}" and hook["body"] is None, hook
        assert slack["headers"]["token"] == "t-1" and slack["headers"]["Authorization"] == f"Bearer {REDACTED}", slack
        approvals = w.cli("approval", "list")
        assert "beta" not in approvals, f"a dry run asks no approval:\n{approvals}"

        # a dry run of a read is a real read
        echo = ok(await run(w, s, "petstore", "find_pets_by_status", {"status": "pending"}, dry_run=True))
        assert "dryRun" not in echo and echo["args"] == {"status": "pending"}, echo
        assert headers(echo)["api-key"] == REDACTED
        assert [(r.method, r.uri) for r in w.httpbin.since(mark)] == [("GET", "/anything/pet/findByStatus?status=pending")]


# --------------------------------------------------------------------------- approvals


async def test_the_first_write_needs_a_person_and_the_approval_stands(world: World) -> None:
    w, base = world, world.httpbin.base
    add = {"name": "rex", "photoUrls": ["u"]}
    async with (
        legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (a, _ia, _wa),
        legacy_session(w.graft.url, w.graft.tokens["beta"]) as (b, _ib, _wb),
    ):
        mark = w.httpbin.mark()
        e = error(await run(w, a, "petstore", "add_pet", add), "approval_required")
        assert "/approvals?agent=alpha&tool=petstore__add_pet" in e["approvalUrl"], e
        assert e["approvalUrl"].startswith(w.graft.base), e
        assert "graft approve alpha petstore__add_pet" in e["tellUser"], e
        error(await run(w, a, "petstore", "add_pet", add), "approval_required")  # asking again
        no_request(w.httpbin, mark, "/anything/pet")
        pending = [line for line in w.cli("approval", "list").splitlines() if "petstore__add_pet" in line]
        assert len(pending) == 1 and pending[0].split()[:2] == ["pending", "alpha"], pending

        assert "Approved" in w.cli("approve", "alpha", "petstore__add_pet")
        echo = ok(await run(w, a, "petstore", "add_pet", add))
        assert echo["method"] == "POST" and echo["url"] == f"{base}/anything/pet"
        assert echo["json"] == add, echo
        h = headers(echo)
        assert h["content-type"] == "application/json" and h["api-key"] == REDACTED, h

        # promote, demote, promote: the approval stands, first-class calls run
        for step in ("promote", "demote", "promote"):
            r = w.record(await a.call_tool(step, {"vendor": "petstore", "name": "add_pet"}))
            assert not r.is_error, r
        echo = ok(w.record(await a.call_tool("petstore__add_pet", {"name": "max", "photoUrls": []})))
        assert echo["json"] == {"name": "max", "photoUrls": []}
        w.record(await a.call_tool("demote", {"vendor": "petstore", "name": "add_pet"}))
        rows = [line for line in w.cli("approval", "list").splitlines() if "petstore__add_pet" in line]
        assert len(rows) == 1 and rows[0].split()[:2] == ["granted", "alpha"], rows

        # beta asks, a person denies: approval_denied, nothing sent
        mark = w.httpbin.mark()
        error(await run(w, b, "petstore", "add_pet", add), "approval_required")
        assert "Denied" in w.cli("deny", "beta", "petstore__add_pet")
        e = error(await run(w, b, "petstore", "add_pet", add), "approval_denied")
        assert e.get("tool") == "petstore__add_pet", e
        no_request(w.httpbin, mark, "/anything/pet")
        rows = [line.split()[:2] for line in w.cli("approval", "list").splitlines() if "petstore__add_pet" in line]
        assert sorted(rows) == [["denied", "beta"], ["granted", "alpha"]], rows
        # alpha's approval is its own
        ok(await run(w, a, "petstore", "add_pet", add))


# --------------------------------------------------------------------------- run_tool = first-class


async def test_run_tool_answers_as_the_first_class_call(world: World) -> None:
    """Through the modern `mcp.Client`: run_tool (not promoted) and the promoted tool agree."""
    w = world
    async with modern_client(w.graft.url, w.graft.tokens["beta"]) as (c, _wire):
        cases = [
            ("petstore", "find_pets_by_status", {"status": "available"}),
            ("twilio", "fetch_address", {"AccountSid": ACCOUNT, "Sid": ADDRESS}),
            ("httpbin", "get_anything_anything", {"anything": "same"}),
        ]
        for vendor, name, input in cases:
            qualified = f"{vendor}__{name}"
            not_promoted = w.record(await c.call_tool(qualified, input))
            error(not_promoted, "not_promoted")
            assert "run_tool" in text(not_promoted)

            via_run = await run(w, c, vendor, name, input)
            ok(via_run)
            assert not w.record(await c.call_tool("promote", {"vendor": vendor, "name": name})).is_error
            try:
                first_class = w.record(await c.call_tool(qualified, input))
            finally:
                w.record(await c.call_tool("demote", {"vendor": vendor, "name": name}))
            ok(first_class)
            # nothing in httpbin's echo varies per request here: the answers are equal
            assert first_class.structured_content == via_run.structured_content, (first_class, via_run)
            assert text(first_class) == text(via_run)
            assert first_class.is_error == via_run.is_error


# --------------------------------------------------------------------------- vendor failures


async def test_vendor_errors_and_timeouts(world: World) -> None:
    w = world
    assert "httpbin__get_status_codes" in tool_names(w, "httpbin status codes")
    assert "httpbin__get_drip" in tool_names(w, "httpbin delay")
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        e = error(await run(w, s, "httpbin", "get_status_codes", {"codes": 500}), "vendor_error")
        assert e["status"] == 500, e
        e = error(await run(w, s, "httpbin", "get_status_codes", {"codes": "418"}), "vendor_error")
        assert e["status"] == 418 and "teapot" in json.dumps(e["body"]), e

        # /drip waits `delay` seconds before its first byte
        started = time.monotonic()
        r = await run(w, s, "httpbin", "get_drip", {"delay": 3, "duration": 0, "numbytes": 1})
        elapsed = time.monotonic() - started
        error(r, "vendor_unreachable")
        assert 1.8 < elapsed < 6.0, f"GRAFT_REQUEST_TIMEOUT={TIMEOUT} but the answer took {elapsed:.2f} s"


async def test_delay_past_the_request_timeout_is_vendor_unreachable(world: World) -> None:
    """/delay/{delay}: httpbin's document types `delay` as `int` (not a JSON Schema type)."""
    w = world
    assert "httpbin__get_delay_delay" in tool_names(w, "httpbin delay")
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        started = time.monotonic()
        r = await run(w, s, "httpbin", "get_delay_delay", {"delay": 3})
        elapsed = time.monotonic() - started
        error(r, "vendor_unreachable")
        assert 1.8 < elapsed < 6.0, f"GRAFT_REQUEST_TIMEOUT={TIMEOUT} but the answer took {elapsed:.2f} s"


# --------------------------------------------------------------------------- the calls log


async def test_graft_calls_lists_each_call_in_words(world: World) -> None:
    """Issue 14.4: `graft calls` shows every call, refused ones too, newest first, with its
    outcome, the vendor's status and the input (secrets redacted)."""
    w = world
    async with legacy_session(w.graft.url, w.graft.tokens["beta"]) as (s, _init, _wire):
        error(await run(w, s, "httpbin", "get_status_codes", {"codes": "502"}), "vendor_error")
        error(await run(w, s, "petstore", "add_pet", {"name": 5}), "invalid_input")
        ok(await run(w, s, "petstore", "add_pet", {"name": "rex", "photoUrls": [], "category": {"name": "c", "password": "hunter22"}}, dry_run=True))
    out = w.cli("calls", "--agent", "beta", "--failed", "--limit", "2")
    rows = [line for line in out.splitlines() if not line.startswith("    ")]
    assert len(rows) == 2, out
    assert re.search(r"\bbeta\s+petstore__add_pet v1  invalid input  \d+ ms$", rows[0]), out
    assert re.search(r"\bbeta\s+httpbin__get_status_codes v1  vendor error HTTP 502  \d+ ms$", rows[1]), out
    assert 'input {"codes":"502"}' in out and "httpbin answered HTTP 502" in out, out
    dry = w.cli("calls", "--agent", "beta", "--outcome", "dry-run")
    assert "petstore__add_pet v1  dry run" in dry and '"password":"<redacted>"' in dry, dry
    assert "hunter22" not in dry
    bad = run_cli("calls", "--outcome", "sideways", data_dir=w.data_dir, check=False)
    assert bad.returncode != 0 and "not an outcome: ok, failed, approval or dry-run" in bad.stderr, bad
    bad = run_cli("calls", "--agent", "nobody", data_dir=w.data_dir, check=False)
    assert bad.returncode != 0 and "no agent named" in bad.stderr, bad


# --------------------------------------------------------------------------- secrets


async def test_no_secret_anywhere(world: World) -> None:
    """Runs last: every answer and CLI output so far, graft's debug log, the database files."""
    w = world
    w.cli("connection", "list")
    w.cli("approval", "list")
    w.cli("calls", "--limit", "500")
    assert len(w.transcript) >= 13, "the transcript holds the setup's CLI output (and the answers of the tests above)"
    answers = "\n".join(w.transcript)
    log = w.graft.log_text()
    assert "DEBUG" in log, "the server log is at debug level"
    files = sorted(p for p in w.data_dir.iterdir() if p.name.startswith("graft.db"))
    assert {"graft.db", "graft.db-wal"} <= {p.name for p in files}, files
    assert (w.data_dir / "secret.key").exists(), list(w.data_dir.iterdir())

    problems = [leak_report("CLI output and MCP answers", answers), leak_report("graft's log (RUST_LOG=debug)", log)]
    for p in files:
        data = p.read_bytes()
        found = [f for f in secret_forms() if f.encode() in data or f.encode("utf-16-le") in data]
        problems.append(f"{p.name} holds {found} in plaintext" if found else "")
    problems = [p for p in problems if p]
    assert not problems, "\n\n".join(problems)


# --------------------------------------------------------------------------- binary, compressed, large


async def test_binary_compressed_and_oversized_answers_keep_the_session(world: World) -> None:
    """Issue 12.5/12.6: images as image content, other binary as an embedded blob,
    compressed answers decoded, and an echo of about 200,000 tokens cut to the result
    token budget (issue 29.4: 25,000, the most Claude Code takes) and within the byte
    budget, after which the SDK's session goes on working (it refuses events over 1 MiB)."""
    w = world
    async with legacy_session(w.graft.url, w.graft.tokens["alpha"]) as (s, _init, _wire):
        r = await run(w, s, "httpbin", "get_image_png", {})
        assert r.is_error is not True, text(r)
        images = [c for c in r.content if isinstance(c, types.ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png", r.content
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG\r\n\x1a\n")
        assert "image/png" in text(r)

        # (httpbin's /bytes fails on this Werkzeug; /range answers octet-stream as well)
        r = await run(w, s, "httpbin", "get_range_numbytes", {"numbytes": 2048})
        blobs = [c.resource for c in r.content if isinstance(c, types.EmbeddedResource)]
        assert len(blobs) == 1 and blobs[0].mime_type == "application/octet-stream", r.content
        assert base64.b64decode(blobs[0].blob) == (b"abcdefghijklmnopqrstuvwxyz" * 79)[:2048]

        for name, flag in (("get_gzip", "gzipped"), ("get_brotli", "brotli"), ("get_deflate", "deflated")):
            assert ok(await run(w, s, "httpbin", name, {}))[flag] is True, name

        # (a declared input: inputs a tool does not declare are refused, issue 25.3)
        big = {"FriendlyName": " ".join(f"w{i}" for i in range(100_000))}
        error(await run(w, s, "twilio", "create_account", big), "approval_required")
        assert "Approved" in w.cli("approve", "alpha", "twilio__create_account")
        r = await run(w, s, "twilio", "create_account", big)
        assert r.is_error is not True, text(r)[:500]
        assert r.structured_content is None
        assert "characters not shown" in text(r) and len(text(r)) <= 512 * 1024
        assert "over Graft's result budget of 25,000 tokens (GRAFT_RESULT_TOKEN_BUDGET)" in text(r), text(r)[-400:]
        # 25,000 tokens are at most a few characters each: far below the byte budget
        assert len(text(r)) < 200_000, len(text(r))
        # the session goes on
        assert ok(await run(w, s, "httpbin", "get_uuid", {}))["uuid"]
    async with modern_client(w.graft.url, w.graft.tokens["alpha"]) as (c, _wire):
        r = w.record(await c.call_tool("run_tool", {"name": "twilio__create_account", "input": big}))
        assert r.is_error is not True and "characters not shown" in text(r)
        assert ok(await run(w, c, "httpbin", "get_uuid", {}))["uuid"]


# --------------------------------------------------------------------------- vendor removal


def test_cli_removes_a_vendor_only_with_yes(tmp_path: Path) -> None:
    """Issue 14.3/14.5: `graft vendor remove` says what it would do and changes nothing
    without --yes; with it the vendor leaves the list, and adding it again brings it back."""
    data = tmp_path / "data"
    data.mkdir()
    run_cli("vendor", "add", "acme", "--base-url", "https://acme.example/api", data_dir=data)
    run_cli("connection", "add", "acme", "--label", "prod", "--kind", "bearer", "--secret-stdin", data_dir=data, stdin="acme-secret-123\n")
    asked = run_cli("vendor", "remove", "acme", data_dir=data, check=False)
    assert asked.returncode != 0, asked
    assert "run again with --yes to confirm" in asked.stderr and "nothing was changed" in asked.stderr, asked.stderr
    assert "acme" in run_cli("vendor", "list", data_dir=data).stdout
    done = run_cli("vendor", "remove", "acme", "--yes", data_dir=data)
    assert "Removed vendor acme" in done.stdout and "revoked 1 connection" in done.stdout, done.stdout
    listed = run_cli("vendor", "list", data_dir=data).stdout
    assert not any(line.startswith("acme ") for line in listed.splitlines()), listed
    assert "Removed (importing a document under one brings it back): acme" in listed, listed
    again = run_cli("vendor", "remove", "acme", "--yes", data_dir=data, check=False)
    assert again.returncode != 0 and "was removed" in again.stderr, again
    back = run_cli("vendor", "add", "acme", "--base-url", "https://acme.example/v2", data_dir=data)
    assert "Brought back the removed vendor acme" in back.stdout and "connections stay revoked" in back.stdout, back.stdout
    assert "https://acme.example/v2" in run_cli("vendor", "list", data_dir=data).stdout
