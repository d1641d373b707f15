"""aiohttp imported without loading the system's CA certificates until a TLS connection needs them.

aiohttp makes its two default TLS contexts when it is imported, each loading the system's CA certificates: tens
of ms of CPU that every `juge run` paid, one that only talks to a server over http:// (a local model, the mock
server) included. :func:`import_aiohttp` imports it with that one load deferred: a context made during the import
loads the certificates it asked for (``set_default_verify_paths``, as ``ssl.create_default_context`` does) when it
first wraps a connection, before any handshake, so what it trusts (``SSL_CERT_FILE``, ``SSL_CERT_DIR``, the
system's roots) is unchanged. Contexts made at any other time are untouched.
"""

from __future__ import annotations

import importlib
import ssl
import sys
import threading
from types import ModuleType
from typing import Any

_WRAPS = ("wrap_bio", "wrap_socket")  # what asyncio, uvloop and ssl sockets call to start a TLS connection


def import_aiohttp() -> ModuleType:
    """``import aiohttp``, deferring its default TLS contexts' certificates to their first connection."""
    if "aiohttp" in sys.modules:
        return sys.modules["aiohttp"]
    made: list[ssl.SSLContext] = []

    def deferred(context: ssl.SSLContext) -> None:
        made.append(context)

    own = ssl.SSLContext.__dict__.get("set_default_verify_paths")  # None: inherited from _ssl._SSLContext
    ssl.SSLContext.set_default_verify_paths = deferred  # type: ignore[method-assign,assignment]
    try:
        aiohttp = importlib.import_module("aiohttp")
    finally:
        if own is None:
            del ssl.SSLContext.set_default_verify_paths
        else:
            ssl.SSLContext.set_default_verify_paths = own  # type: ignore[method-assign]
    for context in made:
        _load_on_first_use(context)
    return aiohttp


def _load_on_first_use(context: ssl.SSLContext) -> None:
    """Make `context` load the default certificates before it first wraps a connection."""
    lock = threading.Lock()

    def load() -> None:
        with lock:
            if "wrap_bio" in vars(context):  # not loaded yet; the wrappers go only once it is
                context.set_default_verify_paths()
                for name in _WRAPS:
                    del vars(context)[name]

    def wrapping(name: str) -> Any:
        def wrap(*args: Any, **kwargs: Any) -> Any:
            load()
            return getattr(context, name)(*args, **kwargs)

        return wrap

    for name in _WRAPS:
        setattr(context, name, wrapping(name))
