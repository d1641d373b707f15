"""The OpenAI-compatible provider's two HTTP clients (aiohttp, pyreqwest) behave alike: the choice, proxies from
the environment, connection reuse, unreachable servers, TLS with a custom CA. The faults, time limits, Retry-After,
body bounds and fleets are the provider tests, run on both (the `each_http_client` fixture)."""

from __future__ import annotations

import asyncio
import datetime
import json
import re
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from juge.config import ProviderSpec
from juge.errors import InputError
from juge.providers import Provider, ProviderError, Request, Response, make_provider
from juge.providers.anthropic import AnthropicProvider
from juge.providers.openai_compat import OpenAICompatProvider
from juge.runs.providers import Providers
from juge.testing.mockserver import MockConfig, expected_answer, serve_in_thread

REQUEST = Request(messages=({"role": "user", "content": "q"},), model="m1", max_tokens=16)
ANSWER = {"model": "m1-2026", "choices": [{"message": {"content": "PASS\nok"}, "finish_reason": "stop"}]}


MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-2026",
    "stop_reason": "end_turn",
    "content": [{"type": "text", "text": "PASS\nok"}],
    "usage": {"input_tokens": 5, "output_tokens": 2},
}


class Stub(ThreadingHTTPServer):
    """A server that answers every POST (a chat completion, or a message on /v1/messages; else the next of
    `answers`: status, body, headers), keeps connections alive, and records what it saw."""

    daemon_threads = True

    def __init__(self, answers: list[tuple[int, bytes | dict, dict[str, str]]] | None = None, delay: float = 0.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.targets: list[str] = []
        self.requests: list[tuple[dict[str, str], dict]] = []
        self.answers = list(answers or [])
        self.delay = delay


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server: Stub

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        sent = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.targets.append(self.path)
        self.server.requests.append(({k.lower(): v for k, v in self.headers.items()}, sent))
        if self.server.answers:
            status, body, headers = self.server.answers.pop(0)
        else:
            status, body, headers = 200, MESSAGE if self.path.endswith("/v1/messages") else ANSWER, {}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        time.sleep(self.server.delay)
        self.send_response(status)
        for name, value in {"content-type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def stub(tls: ssl.SSLContext | None = None, **options: Any) -> Iterator[Stub]:
    server = Stub(**options)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def ask(provider: Provider, times: int = 1, request: Request = REQUEST) -> list[Response | ProviderError]:
    async def main() -> list[Response | ProviderError]:
        out: list[Response | ProviderError] = []
        try:
            for _ in range(times):
                try:
                    out.append(await provider.complete(request))
                except ProviderError as exc:
                    out.append(exc)
        finally:
            await provider.aclose()
        return out

    return asyncio.run(main())


@pytest.mark.needs("pyreqwest")
def test_the_client_is_the_option_else_juge_http_else_aiohttp(monkeypatch):
    monkeypatch.delenv("JUGE_HTTP", raising=False)
    assert make_provider("openai", base_url="http://127.0.0.1:9/v1").transport.name == "aiohttp"
    monkeypatch.setenv("JUGE_HTTP", "pyreqwest")
    assert make_provider("openai", base_url="http://127.0.0.1:9/v1").transport.name == "pyreqwest"
    chosen = make_provider("openai", base_url="http://127.0.0.1:9/v1", http="aiohttp")
    assert chosen.transport.name == "aiohttp"  # the option wins over the environment
    fleet = make_provider("openai", base_url=["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], http="pyreqwest")
    assert {e.provider.transport.name for e in fleet.endpoints} == {"pyreqwest"}
    azure = make_provider("azure", endpoint="https://x.openai.azure.com", api_key="k", http="pyreqwest")
    assert azure.transport.name == "pyreqwest"


def test_an_unknown_client_is_refused_naming_the_choices(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match=r"http = 'curl': choose one of 'aiohttp', 'pyreqwest'"):
        make_provider("openai", base_url="http://127.0.0.1:9/v1", http="curl")
    monkeypatch.setenv("JUGE_HTTP", "requests")
    with pytest.raises(ValueError, match=r"JUGE_HTTP = 'requests'"):
        make_provider("openai", base_url="http://127.0.0.1:9/v1")
    monkeypatch.delenv("JUGE_HTTP")
    with pytest.raises(InputError, match="provider 'openai': http = 'curl'"):  # an eval file's option: exit 2
        Providers(None, tmp_path).get(ProviderSpec(name="openai", options={"base_url": "http://x/v1", "http": "curl"}))
    # In an eval file the error names the options' line and key, not the provider's name (which is fine).
    from juge.config import load_eval

    (tmp_path / "c.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n', encoding="utf-8")
    for options, field, line in (('{ base_url = "http://x/v1", http = "curl" }', "provider.options", 9),
                                 ('{ base_url = "http://x/v1" }', "provider.name", 8)):  # fmt: skip
        path = tmp_path / "eval.toml"
        name = "openai" if field == "provider.options" else "opneai"
        path.write_text(f'cases = "c.jsonl"\n[[judges]]\nname = "j"\nsetup = "passfail"\nmodel = "m"\ndescription = "d"\n'
                        f'[provider]\nname = "{name}"\noptions = {options}\n', encoding="utf-8")  # fmt: skip
        from juge.runs.providers import Providers as Made
        from juge.runs.providers import provider_for

        config = load_eval(path)
        with pytest.raises(InputError) as exc:
            provider_for(Made(config.spec.provider, tmp_path), config, None, None, None)
        assert (exc.value.field, exc.value.line) == (field, line)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("timeout", [float("nan"), -3, 0, 1e308, "5"])
def test_a_timeout_that_is_no_time_is_refused_when_the_provider_is_made(provider, timeout, tmp_path):
    """NaN or -3 seconds failed every call of the run (pyreqwest: no negative Duration) instead of exit 2."""
    spec = ProviderSpec(name=provider, options={"base_url": "http://127.0.0.1:9/v1", "timeout": timeout})
    with pytest.raises(InputError, match="timeout must be seconds"):
        Providers(None, tmp_path).get(spec)


def test_pyreqwest_missing_is_an_error_saying_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyreqwest", None)  # as if not installed
    with pytest.raises(ValueError, match=r"pip install 'juge\[fast-http\]'"):
        make_provider("openai", base_url="http://127.0.0.1:9/v1", http="pyreqwest")


@pytest.mark.needs("pyreqwest")
def test_the_client_does_not_change_the_cache_identity(tmp_path):
    """The same answers come over either client: a run on pyreqwest is answered from aiohttp's cache."""
    providers = Providers(None, tmp_path)
    plain = providers.get(ProviderSpec(name="openai", options={"base_url": "http://x/v1"}))
    fast = providers.get(ProviderSpec(name="openai", options={"base_url": "http://x/v1", "http": "pyreqwest"}))
    other = providers.get(ProviderSpec(name="openai", options={"base_url": "http://y/v1", "http": "pyreqwest"}))
    assert plain is not fast and plain.transport.name != fast.transport.name
    assert plain.cache_identity == fast.cache_identity != other.cache_identity


def provider_at(kind: str, root: str, **options: Any) -> Provider:
    """The `kind` provider (openai or anthropic) on the server at `root` (http://host:port)."""
    if kind == "anthropic":
        return AnthropicProvider(base_url=root, api_key="k", **options)
    return OpenAICompatProvider(base_url=root + "/v1", api_key="k", **options)


PROVIDERS = pytest.mark.parametrize("kind", ["openai", "anthropic"])
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@PROVIDERS
@pytest.mark.usefixtures("each_http_client")
def test_the_environments_proxy_carries_the_call(monkeypatch, kind):
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with stub() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_port}")
        [answer] = ask(provider_at(kind, "http://models.example"))
    assert isinstance(answer, Response) and answer.text == "PASS\nok"
    assert proxy.targets == ["http://models.example" + PATHS[kind]]  # the absolute form: a proxy request


@pytest.mark.usefixtures("each_http_client")
def test_a_redirect_is_followed_with_the_same_body():
    with stub(answers=[(307, b"", {"location": "/v2/chat/completions"})]) as server:
        [answer] = ask(OpenAICompatProvider(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="k"))
    assert isinstance(answer, Response) and answer.text == "PASS\nok"
    assert server.targets == ["/v1/chat/completions", "/v2/chat/completions"]
    assert server.requests[0][1] == server.requests[1][1]


@PROVIDERS
@pytest.mark.usefixtures("each_http_client")
def test_connections_are_kept_alive_and_reused(kind):
    with stub() as server:
        answers = ask(provider_at(kind, f"http://127.0.0.1:{server.server_port}"), times=10)
    assert all(isinstance(a, Response) for a in answers) and len(server.targets) == 10
    # aiohttp: one connection; hyper (pyreqwest) gives a connection back to its pool just after the body is
    # read, so a call sent at that instant may open a second one (1 in 20 runs of this test)
    assert server.connections <= 3


@pytest.mark.usefixtures("each_http_client")
def test_a_closed_port_is_unreachable_and_a_reset_is_not():
    with stub() as server:
        port = server.server_port  # free once the stub is gone
    [refused] = ask(OpenAICompatProvider(base_url=f"http://127.0.0.1:{port}/v1"))
    assert isinstance(refused, ProviderError) and refused.unreachable and refused.retryable
    assert str(refused).startswith("connection failed")
    with serve_in_thread(MockConfig(faults={"reset": 1.0})) as mock:
        [reset] = ask(OpenAICompatProvider(base_url=mock.url))
    assert isinstance(reset, ProviderError) and not reset.unreachable and reset.retryable
    assert "reset by peer" in str(reset)


@pytest.mark.usefixtures("each_http_client")
def test_a_call_after_aclose_is_refused_as_closing():
    from juge.providers.base import ProviderClosed

    with stub() as server:
        provider = OpenAICompatProvider(base_url=f"http://127.0.0.1:{server.server_port}/v1")

        async def main() -> None:
            await provider.complete(REQUEST)
            await provider.aclose()
            assert provider.closed
            await provider.complete(REQUEST)

        with pytest.raises(ProviderClosed):
            asyncio.run(main())


def _certificates(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A CA's certificate (PEM file) and a server context with a certificate for 127.0.0.1 that it signed."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def made(subject: str, key, issuer: str, issuer_key, *, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            )
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
            ).add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = made("juge test CA", ca_key, "juge test CA", ca_key, ca=True)
    leaf = made("127.0.0.1", key, "juge test CA", ca_key, ca=False)
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return ca_file, context


CALL = """
import asyncio, sys
from juge.providers import ProviderError, Request
from juge.providers.openai_compat import OpenAICompatProvider

async def main():
    provider = OpenAICompatProvider(base_url=sys.argv[1], timeout=20)
    try:
        r = await provider.complete(Request(messages=({"role": "user", "content": "q"},), model="m1"))
        return "answered " + r.text.split()[0]
    except ProviderError as exc:
        return "refused " + str(exc)
    finally:
        await provider.aclose()

print(asyncio.run(main()))
"""


@pytest.mark.parametrize("client", ["aiohttp", pytest.param("pyreqwest", marks=pytest.mark.needs("pyreqwest"))])
def test_tls_is_verified_and_a_custom_ca_is_taken_from_ssl_cert_file(client, tmp_path, monkeypatch):
    """Each in a process of its own: both clients read the CA file when their TLS settings are made."""
    pytest.importorskip("cryptography")
    ca_file, context = _certificates(tmp_path)
    said = {}
    with stub(tls=context) as server:
        url = f"https://127.0.0.1:{server.server_port}/v1"
        for trust in ("system", "custom"):
            env = {k: v for k, v in __import__("os").environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
            env |= {"JUGE_HTTP": client, "NO_PROXY": "*"} | (
                {"SSL_CERT_FILE": str(ca_file)} if trust == "custom" else {}
            )
            done = subprocess.run(
                [sys.executable, "-c", CALL, url], capture_output=True, text=True, env=env, timeout=60
            )
            said[trust] = done.stdout.strip() or done.stderr[-500:]
    assert said["system"].startswith("refused connection failed"), said  # an unknown CA: not trusted
    assert "certificate" in said["system"].lower(), said
    assert said["custom"] == "answered PASS", said


# --- the Anthropic provider on the same clients ----------------------------------------------------------------

ASKED = Request(
    messages=({"role": "system", "content": "sys"}, {"role": "user", "content": "q"}), model="claude-x", max_tokens=16
)


def anthropic_answers(*answers: tuple[int, bytes | dict, dict[str, str]], **options: Any) -> tuple[list, Stub]:
    with stub(answers=list(answers)) as server:
        got = ask(
            AnthropicProvider(base_url=f"http://127.0.0.1:{server.server_port}", api_key="key-1", **options),
            times=len(answers),
            request=ASKED,
        )
    return got, server


def message(**fields: Any) -> dict:
    return {**MESSAGE, **fields}


@pytest.mark.usefixtures("each_http_client")
def test_anthropic_answers_refusals_and_cut_answers_are_read_and_the_request_is_the_messages_api():
    (answer, refused, cut), server = anthropic_answers(
        (200, message(), {}),
        (200, message(stop_reason="refusal", content=[]), {}),
        (200, message(stop_reason="max_tokens", content=[{"type": "text", "text": "Let me"}]), {}),
    )
    assert isinstance(answer, Response) and (answer.text, answer.model, answer.tokens_in, answer.tokens_out) == (
        "PASS\nok",
        "claude-test-2026",
        5,
        2,
    )
    assert not answer.refused and not answer.truncated and answer.raw == MESSAGE
    assert isinstance(refused, Response) and refused.refused and refused.refusal_reason == "refusal"
    assert isinstance(cut, Response) and cut.truncated and cut.text == "Let me"
    headers, body = server.requests[0]
    assert server.targets[0] == "/v1/messages"
    assert headers["x-api-key"] == "key-1" and headers["anthropic-version"] == "2023-06-01"
    assert body == {
        "model": "claude-x",
        "messages": [{"role": "user", "content": "q"}],
        "max_tokens": 16,
        "temperature": 0.0,
        "system": "sys",
    }


@pytest.mark.usefixtures("each_http_client")
def test_anthropic_errors_are_retried_as_the_sdks_were_and_carry_retry_after():
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}
    (busy, limited, refused), _ = anthropic_answers(
        (529, overloaded, {"retry-after": "3"}),
        (429, overloaded, {"retry-after-ms": "250"}),
        (400, bad, {}),
    )
    assert isinstance(busy, ProviderError) and busy.retryable and busy.status == 529 and busy.retry_after == 3.0
    assert str(busy) == "HTTP 529: busy"
    assert isinstance(limited, ProviderError) and limited.retryable and limited.retry_after == 0.25
    assert isinstance(refused, ProviderError) and not refused.retryable and refused.status == 400
    assert "max_tokens: too large" in str(refused)


@pytest.mark.usefixtures("each_http_client")
def test_an_anthropic_answer_of_another_shape_is_refused_and_garbage_is_retried():
    twice = b'{"type": "message", "model": "m", "content": [{"type": "text", "text": "FAIL", "text": "PASS"}]}'
    (dup, shape, garbage, usage), _ = anthropic_answers(
        (200, twice, {}),
        (200, message(content="PASS"), {}),
        (200, b"<html>bad gateway</html>", {}),
        (200, message(usage={"input_tokens": 5, "output_tokens": 10**15}), {}),
    )
    assert isinstance(dup, ProviderError) and not dup.retryable and "'text' appears twice" in str(dup)
    assert isinstance(shape, ProviderError) and not shape.retryable and "'content' is str" in str(shape)
    assert isinstance(garbage, ProviderError) and garbage.retryable and "not valid JSON" in str(garbage)
    assert isinstance(usage, ProviderError) and not usage.retryable and "before it is costed" in str(usage)


@pytest.mark.usefixtures("each_http_client")
def test_an_anthropic_body_over_the_bound_is_refused_and_the_time_limit_holds():
    long = message(content=[{"type": "text", "text": "PASS\n" + "x" * 50_000}])
    (over,), _ = anthropic_answers((200, long, {}), max_response_bytes=10_000)
    assert isinstance(over, ProviderError) and not over.retryable and "max_response_bytes" in str(over)
    with stub(delay=1.0) as slow:
        [late] = ask(AnthropicProvider(base_url=f"http://127.0.0.1:{slow.server_port}", api_key="k", timeout=0.2))
    assert isinstance(late, ProviderError) and late.retryable and str(late) == "timeout: no answer within 0.2 s"


@pytest.mark.usefixtures("each_http_client")
def test_an_unreachable_anthropic_server_is_said_so():
    with stub() as server:
        port = server.server_port
    [refused] = ask(AnthropicProvider(base_url=f"http://127.0.0.1:{port}", api_key="k"))
    assert isinstance(refused, ProviderError) and refused.unreachable and refused.retryable


def test_the_anthropic_sdk_is_needed_only_for_batches(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if not installed
    provider = AnthropicProvider(base_url="http://127.0.0.1:9", api_key="k")
    with pytest.raises(ProviderError, match=r"pip install 'juge\[anthropic\]'"):
        provider.batches()


# What each of the mock server's faults looks like through the Anthropic provider (its /v1/messages route):
# the same as through the OpenAI-compatible one (tests/testing/test_mockserver.py).
ANTHROPIC_FAULTS = {
    "rate_limit": (429, "HTTP 429"),
    "server_error": (500, "HTTP 500"),
    "unavailable": (503, "HTTP 503"),
    "reset": (None, "connection failed: .*reset by peer"),
    "timeout": (None, "timeout"),
    "truncated": (None, "connection failed: .*without sending complete message body"),
    "malformed": (None, "the server's answer was not valid JSON"),
}


def anthropic_on_mock(config: MockConfig, **options: Any) -> tuple[Response | ProviderError, dict]:
    with serve_in_thread(config) as server:
        [got] = ask(AnthropicProvider(base_url=server.url.removesuffix("/v1"), api_key="k", **options), request=ASKED)
        return got, server.stats()


@pytest.mark.parametrize("kind", sorted(ANTHROPIC_FAULTS))
@pytest.mark.usefixtures("each_http_client")
def test_the_mock_servers_faults_reach_the_anthropic_provider_as_retryable_errors(kind):
    got, stats = anthropic_on_mock(
        MockConfig(faults={kind: 1.0}, hang=60, retry_after=0.25), timeout=0.3 if kind == "timeout" else 30
    )
    status, pattern = ANTHROPIC_FAULTS[kind]
    assert isinstance(got, ProviderError) and got.retryable and got.status == status, got
    assert re.search(pattern, str(got)), str(got)
    assert stats["faults"][kind] == 1 and stats["answered"] == 0
    if kind == "rate_limit":
        assert got.retry_after == pytest.approx(0.25)  # retry-after-ms wins


@pytest.mark.parametrize(
    "kind, check",
    [
        (None, lambda r: r.text == expected_answer(MockConfig(), "claude-x", [{"role": "user", "content": "q"}])),
        ("empty", lambda r: r.text == "" and not r.refused),
        ("refusal", lambda r: r.refused and r.text == ""),
        ("length", lambda r: r.truncated),
    ],
)
@pytest.mark.usefixtures("each_http_client")
def test_the_mock_servers_answers_reach_the_anthropic_provider(kind, check):
    got, _ = anthropic_on_mock(MockConfig(faults={kind: 1.0} if kind else {}))
    assert isinstance(got, Response) and check(got), got


@pytest.mark.parametrize(
    "kind, says", [("duplicate_keys", "'text' appears twice"), ("usage_bomb", "before it is costed")]
)
@pytest.mark.usefixtures("each_http_client")
def test_the_mock_servers_hostile_answers_are_refused_by_the_anthropic_provider(kind, says):
    got, _ = anthropic_on_mock(MockConfig(faults={kind: 1.0}))
    assert isinstance(got, ProviderError) and not got.retryable and says in str(got), got


def test_a_run_on_pyreqwest_never_imports_aiohttp():
    """aiohttp is imported when its transport is made (~0.15 s of CPU), so a run on pyreqwest does without it."""
    pytest.importorskip("pyreqwest")
    code = (
        "import sys\n"
        "from juge.providers import make_provider\n"
        "import juge.runs.api\n"
        "make_provider('openai', base_url='http://127.0.0.1:9/v1', http='pyreqwest')\n"
        "make_provider('anthropic', base_url='http://127.0.0.1:9', http='pyreqwest')\n"
        "print('aiohttp' in sys.modules)\n"
        "make_provider('openai', base_url='http://127.0.0.1:9/v1', http='aiohttp')\n"
        "print('aiohttp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]
