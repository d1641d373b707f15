"""What juge's two local web apps (``juge label serve``, ``juge view``) share: the security headers, the
template environment that escapes everything and shows hidden characters, the failed-sign-in limiter, and
the listening socket bound before anything is announced.

FastAPI, Jinja2 and uvicorn are imported only by the apps that use this module, never by ``juge --help``.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import time
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from starlette.exceptions import HTTPException
from starlette.requests import Request

from juge.errors import InputError
from juge.visible import visible_html

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def template_env(folder: Path) -> Environment:
    """Jinja2 templates from `folder` with autoescape on and every shown string passed through
    `visible_html`, so hidden characters (bidi overrides, zero-width, controls) are shown, never act."""
    return Environment(
        loader=FileSystemLoader(folder),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=visible_html,
    )


def add_error_pages(app: Any, render: Callable[..., Any], *, invalid: str) -> None:
    """The error pages both web apps answer with: an HTTP error as its own page, a request field missing, of the
    wrong type or out of range (a 40-digit number) a 400 naming it as `invalid` ("form field", "parameter"),
    not a 422 or 500, and anything else a 500 that says nothing of the cause."""
    from fastapi.exceptions import RequestValidationError

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Any:
        return render("error.html", status=exc.status_code, status_code=exc.status_code, message=exc.detail)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Any:
        first = exc.errors()[0] if exc.errors() else {}
        field = str(first.get("loc", ("", "?"))[-1])
        return render("error.html", status=400, status_code=400, message=f"The {invalid} {field!r} is not valid.")

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Any:
        # This answer leaves through Starlette's outermost layer, past the header middleware: set them here.
        response = render("error.html", status=500, status_code=500, message="Something went wrong on the server.")
        response.headers.update(SECURITY_HEADERS)
        return response


def port_of(request: Request) -> int:
    return request.url.port or (443 if request.url.scheme == "https" else 80)


def client_address(request: Request) -> str:
    """The address a request comes from: the socket's peer, unless that peer is the app's trusted proxy
    (``app.state.trusted_proxy``, `--trusted-proxy`), whose X-Forwarded-For's last entry (the address the
    proxy itself saw) is taken. Anyone can send the header, so no other peer's is read."""
    peer = request.client.host if request.client else "unknown"
    trusted = getattr(request.app.state, "trusted_proxy", None)
    if trusted is not None and peer == trusted:
        forwarded = request.headers.get("x-forwarded-for", "").split(",")[-1].strip()
        return forwarded or peer
    return peer


def trusted_proxy_address(value: str | None) -> str | None:
    """`--trusted-proxy` as the address a peer shows (an IP address, normalised); InputError otherwise."""
    if value is None:
        return None
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        raise InputError(
            f"--trusted-proxy {value!r}: give the IP address of the reverse proxy in front (e.g. 127.0.0.1)"
        ) from None


class LoginLimiter:
    """At most `limit` failed sign-ins per client address in `window` seconds (then 429 until they age out).

    In memory: the server is one process; a restart forgets (a guess of a 192-bit token stays hopeless)."""

    def __init__(self, limit: int = 10, window: float = 600.0):
        self.limit, self.window = limit, window
        self.failures: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self.failures[address]
        while times and times[0] <= now - self.window:
            times.popleft()
        return times

    def check(self, address: str) -> None:
        if len(self._recent(address, time.monotonic())) >= self.limit:
            raise HTTPException(429, "Too many failed sign-ins from this address. Wait a few minutes and try again.")

    def failed(self, address: str) -> None:
        self._recent(address, time.monotonic()).append(time.monotonic())


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port and listening (as uvicorn binds it: SO_REUSEADDR); in use or unusable is
    InputError."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise InputError(f"--host {host!r}: cannot resolve it ({exc.strerror})") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use; stop the other server or pick --port") from None
        raise InputError(f"cannot listen on {host} port {port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    sock.listen(2048)  # as uvicorn will: a browser opening the printed link before the server runs waits, not fails
    return sock


def shown_host(host: str, port: int) -> str:
    """``http://host:port`` as a browser takes it (an IPv6 address in brackets)."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def serve(app: Any, host: str, port: int, sock: socket.socket | None) -> None:
    """Serve `app` with uvicorn on the socket bound before (until Ctrl-C)."""
    import uvicorn

    # proxy_headers off: uvicorn would otherwise take X-Forwarded-For from any local peer as the client's
    # address (the sign-in limiter's key); the app reads it only from its --trusted-proxy (client_address).
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", proxy_headers=False)
    server = uvicorn.Server(config)
    server.run(sockets=[sock] if sock is not None else None)
