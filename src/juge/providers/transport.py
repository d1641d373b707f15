"""The HTTP client under the OpenAI-compatible, Azure and Anthropic providers: one interface, two clients.

A `Transport` sends one POST and gives back (status, headers, body); every rule about the answer (errors,
retries, Retry-After, JSON) stays in the provider, so each client behaves the same. The choice is the
provider option ``http`` (``"aiohttp"``, the default, or ``"pyreqwest"``), else the environment's
``JUGE_HTTP``. ``pyreqwest`` (Rust's reqwest; ``pip install 'juge[fast-http]'``) costs less CPU per call
(bench/RESULTS.md); it is an optional extra because it is young (pre-1.0, one maintainer).

What each client does alike, and the tests hold both to (tests/providers/test_transports.py and the provider
tests run once per client by the `each_http_client` fixture):

- time limit: `timeout` seconds for the whole call (connect, send, answer, body), none by default;
- proxy: the one the provider read from the environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY;
  never for a loopback server), passed explicitly: neither client reads the environment itself;
- body bound: `max_response_bytes` of the decoded body, refused as it is read (an announced longer length
  before reading anything);
- connections kept alive (15 s idle) and reused, HTTP/1.1, no pool limit (the engine bounds concurrency), redirects
  followed (up to 10), no cookies;
- TLS verified against the system's roots; a custom CA through ``SSL_CERT_FILE``, which OpenSSL (aiohttp) and
  rustls-native-certs (pyreqwest) both read;
- failures: a refused connection is ``unreachable``, a time-out and a cut body are retryable, all named
  the same way ("timeout: ...", "connection failed: ...") whichever client met them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from juge.providers.base import ProviderClosed, ProviderError, body_too_large
from juge.providers.deferred_tls import import_aiohttp

if TYPE_CHECKING:
    import aiohttp

CLIENTS = ("aiohttp", "pyreqwest")
DEFAULT_CLIENT = "aiohttp"
ENV_VAR = "JUGE_HTTP"

Reply = tuple[int, Mapping[str, str], bytes]


def http_client_name(value: object = None) -> str:
    """The HTTP client to use: `value` (the provider option ``http``), else ``JUGE_HTTP``, else aiohttp.
    A ValueError names the choices otherwise, and says how to install pyreqwest when it is missing."""
    source = "http"
    if value is None:
        value, source = os.environ.get(ENV_VAR) or DEFAULT_CLIENT, ENV_VAR
    if value not in CLIENTS:
        raise ValueError(f"{source} = {value!r:.60}: choose one of {', '.join(map(repr, CLIENTS))}")
    if value == "pyreqwest":
        try:
            import pyreqwest  # noqa: F401
        except ImportError:
            raise ValueError(
                f"{source} = 'pyreqwest' needs the pyreqwest client: pip install 'juge[fast-http]'"
                f" (or use {DEFAULT_CLIENT!r}, the default)"
            ) from None
    return str(value)


MAX_TIMEOUT = 3600.0  # seconds: as the engine's own timeout allows


class Transport(ABC):
    """One client's connections: `post` one body, read the answer within the bound; `aclose` in the loop."""

    name: str

    def __init__(self, *, timeout: float | None, max_response_bytes: int, proxy: str | None, owner: str):
        # Checked here, as the provider is made (exit 2 naming the option): NaN or a negative time failed every
        # call of a run, each client in its own words.
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT
        ):
            raise ValueError(f"timeout must be seconds above 0 and at most {MAX_TIMEOUT:g}, got {timeout!r:.60}")
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.proxy = proxy
        self.owner = owner  # the provider's name, for the error of a call after aclose

    @abstractmethod
    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        """(status, headers, body) of one POST; a failed connection, a time-out or a cut body is a retryable
        ProviderError (not retryable: a body over the bound)."""

    @property
    @abstractmethod
    def closed(self) -> bool:
        """No connections are open (none made yet, or closed by `aclose`)."""

    @abstractmethod
    async def aclose(self) -> None: ...

    def _timed_out(self, exc: BaseException) -> ProviderError:
        limit = f" within {self.timeout:g} s" if self.timeout is not None else ""
        return ProviderError(f"timeout: no answer{limit}", retryable=True)

    def _closed(self) -> ProviderClosed:
        return ProviderClosed(f"{self.owner}: the HTTP session was closed; no call was made")


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY), or None.
    A server on this machine is never reached through a proxy, whatever NO_PROXY says."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if is_loopback(host) or proxy_bypass(host):
        return None
    proxies = getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def is_loopback(host: str) -> bool:
    """`host` names this machine: localhost (or a name under .localhost, RFC 6761), 127.0.0.0/8, ::1."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_transport(
    client: str, *, timeout: float | None, max_response_bytes: int, proxy: str | None, owner: str
) -> Transport:
    """The transport of `client` (a name `http_client_name` gave); nothing is connected yet."""
    kind = PyreqwestTransport if client == "pyreqwest" else AiohttpTransport
    return kind(timeout=timeout, max_response_bytes=max_response_bytes, proxy=proxy, owner=owner)


class AiohttpTransport(Transport):
    """aiohttp: one session per event loop (a session belongs to the loop that made it)."""

    name = "aiohttp"

    def __init__(self, **options: Any):
        super().__init__(**options)
        # Imported here, not with juge: a run on pyreqwest never pays for it (~0.15 s of CPU). Its default TLS
        # contexts read the CA certificates at their first connection (juge.providers.deferred_tls).
        self._aiohttp = import_aiohttp()
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_for_loop(self) -> aiohttp.ClientSession:
        aiohttp = self._aiohttp
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            self._loop = loop
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        elif self._session.closed:  # closed in this loop by `aclose`: the run is ending
            raise self._closed()
        return self._session

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        session = self._session_for_loop()
        aiohttp = self._aiohttp
        try:
            async with session.post(url, data=body, headers=headers, proxy=self.proxy) as reply:
                return reply.status, reply.headers, await self._read(reply)
        except TimeoutError as exc:
            raise self._timed_out(exc) from exc
        except aiohttp.ClientPayloadError as exc:
            raise ProviderError(
                f"connection failed: peer closed connection without sending complete message body ({exc})",
                retryable=True,
            ) from exc
        except aiohttp.ClientConnectorError as exc:  # no connection made: refused, no such host
            raise ProviderError(f"connection failed: {_cause(exc)}", retryable=True, unreachable=True) from exc
        except aiohttp.ClientConnectionError as exc:
            raise ProviderError(f"connection failed: {_cause(exc)}", retryable=True) from exc

    async def _read(self, reply: aiohttp.ClientResponse) -> bytes:
        """The body of `reply`, refused (non-retryable) past the bound: read piece by piece, so a server that
        sends gigabytes costs no more memory than the bound."""
        cap = self.max_response_bytes
        length = reply.content_length
        if length is not None and length > cap:
            raise body_too_large(cap, length)
        if length is not None and "content-encoding" not in reply.headers:
            return bytes(await reply.read())  # no further than the announced length: the fast path
        read = bytearray()
        async for chunk in reply.content.iter_any():
            read += chunk
            if len(read) > cap:
                raise body_too_large(cap)
        return bytes(read)

    @property
    def closed(self) -> bool:
        return self._session is None or self._session.closed

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class PyreqwestTransport(Transport):
    """pyreqwest (reqwest, hyper, rustls): one client per event loop, as aiohttp's session."""

    name = "pyreqwest"

    def __init__(self, **options: Any):
        super().__init__(**options)
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._was_closed = False
        self._errors: Any = None

    def _build(self) -> Any:
        from pyreqwest import exceptions
        from pyreqwest.client import ClientBuilder
        from pyreqwest.proxy import ProxyBuilder

        self._errors = exceptions

        # As aiohttp's session: HTTP/1.1 only (one h2 connection would cap a run at the server's stream limit),
        # idle connections dropped after 15 s, redirects followed (up to 10), no cookies.
        builder = ClientBuilder().error_for_status(False).default_cookie_store(False).http1_only()
        builder = builder.pool_idle_timeout(timedelta(seconds=15)).follow_redirects(True).max_redirects(10)
        builder = builder.no_proxy()  # the environment's proxy is the provider's to read (loopback: none)
        if self.proxy is not None:
            builder = builder.proxy(ProxyBuilder.all(self.proxy))
        if self.timeout is not None:
            builder = builder.timeout(timedelta(seconds=self.timeout))
        return builder.build()

    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._loop, self._was_closed = loop, False
            self._client = self._build()
        elif self._was_closed:
            raise self._closed()
        return self._client

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        client = self._client_for_loop()
        errors = self._errors
        try:
            async with client.post(url).headers(headers).body_bytes(body).build_streamed() as reply:
                return reply.status, reply.headers, await self._read(reply)  # headers: a case-insensitive Mapping
        except errors.RequestTimeoutError as exc:
            raise self._timed_out(exc) from exc
        except errors.BodyDecodeError as exc:  # the body stopped short (read with the head when it is small)
            raise ProviderError(
                f"connection failed: peer closed connection without sending complete message body ({_causes(exc)})",
                retryable=True,
            ) from exc
        except errors.ClientClosedError as exc:
            raise self._closed() from exc
        except errors.TransportError as exc:
            # reqwest calls a reset a ConnectError too: unreachable only when no connection was made
            unreachable = any(c == "client error (Connect)" for c in _cause_messages(exc))
            raise ProviderError(f"connection failed: {_causes(exc)}", retryable=True, unreachable=unreachable) from exc

    async def _read(self, reply: Any) -> bytes:
        cap = self.max_response_bytes
        length = reply.get_header("content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            raise body_too_large(cap, int(length))
        reader = reply.body_reader
        read = bytearray()
        while (chunk := await reader.read_chunk()) is not None:  # decoded: a gzip bomb is bounded too
            read += chunk
            if len(read) > cap:
                raise body_too_large(cap)
        return bytes(read)

    @property
    def closed(self) -> bool:
        return self._client is None or self._was_closed

    async def aclose(self) -> None:
        if self._client is not None and not self._was_closed:
            self._was_closed = True
            await self._client.close()


def _cause_messages(exc: BaseException) -> list[str]:
    details = getattr(exc, "details", None) or {}
    return [str(c.get("message")) for c in details.get("causes") or () if isinstance(c, dict)]


def _causes(exc: BaseException) -> str:
    """pyreqwest's error and its innermost cause ("connection error: Connection refused (os error 111)")."""
    head = str(exc.args[0]) if exc.args else type(exc).__name__
    causes = _cause_messages(exc)
    return f"{head}: {causes[-1]}" if causes and causes[-1] != head else head


def _cause(exc: BaseException) -> str:
    """The innermost cause that says something ("Connection reset by peer"), not a generic wrapper."""
    text, seen = str(exc), {id(exc)}
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        text = str(cause) or text
        cause = cause.__cause__ or cause.__context__
    return text
