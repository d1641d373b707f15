"""``juge view`` as a function: read the files to show, open the store read-only, bind the socket, and hand
back a server whose printed URL carries a one-time sign-in token."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from juge.view.shown import read_shown


@dataclass
class ViewServer:
    """The viewer bound to its socket (``juge view``): print `login_url`, then `run()` until Ctrl-C."""

    url: str
    login_url: str  # url + "/login?token=...": opens once, then the browser holds a session cookie
    host: str
    port: int
    warnings: list[str] = field(default_factory=list)
    _app: Any = None
    _sock: socket.socket | None = None

    def run(self) -> None:
        from juge.webapp import serve

        try:
            serve(self._app, self.host, self.port, self._sock)
        finally:
            self._app.state.store.close()
            if self._app.state.label_store is not None:
                self._app.state.label_store.close()


def view_server(
    db: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    calibrations: Sequence[str | Path] = (),
    policies: Sequence[str | Path] = (),
    tests: Sequence[str | Path] = (),
    labels: str | Path | None = None,
    labels_map: Mapping[str, str] | None = None,
    labels_format: str | None = None,
    label_db_url: str | None = None,
) -> ViewServer:
    """The viewer over the store `db` (and the calibrations, policies, holdout tests and labels given), bound
    to host:port (0: any free port). Every file is read first and the port bound before anything is
    announced: a bad file or a port in use is an InputError. The store is opened read-only. People's labels come
    from `labels` and from the labelling projects a run was attached to, in the label store `label_db_url` (default:
    the run store's SQLite file, when it holds labelling projects)."""
    from juge.store import open_store
    from juge.view.app import create_app
    from juge.view.labels import find_label_store
    from juge.webapp import is_loopback, listening_socket, shown_host

    shown = read_shown(calibrations, policies, tests, labels, labels_map=labels_map, labels_format=labels_format)
    store = open_store(db, must_exist=True)
    label_store = None
    try:
        label_store = find_label_store(store, label_db_url)
        store.read_only()
        token = secrets.token_urlsafe(24)
        app = create_app(store, shown, token=token, label_store=label_store)
        sock = listening_socket(host, port)
    except BaseException:
        store.close()
        if label_store is not None:
            label_store.close()
        raise
    warnings = [] if is_loopback(host) else [f"binding {host}: the session travels in a cookie; use HTTPS in front."]
    bound = sock.getsockname()[1]
    url = shown_host(host, bound)
    return ViewServer(url, f"{url}/login?token={token}", host, bound, warnings, app, sock)
