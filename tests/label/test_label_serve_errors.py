"""`juge label` input errors: bad ports, a port in use, bad or unreachable --db-url; `serve --port 0` prints its port."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from juge.cli import app
from juge.errors import InputError

runner = CliRunner()


def label(*args: str, db_url: str) -> object:
    return runner.invoke(app, ["label", *args, "--db-url", db_url], env={"COLUMNS": "300"})


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_serve_refuses_a_port_out_of_range(tmp_path: Path, port: str) -> None:
    result = label("serve", "--port", port, db_url=f"sqlite:///{tmp_path / 'l.db'}")
    assert result.exit_code == 2 and "--port" in result.output


def test_serve_on_a_port_in_use_is_an_input_error_before_the_banner(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = label("serve", "--port", str(port), db_url=f"sqlite:///{tmp_path / 'l.db'}")
    assert isinstance(result.exception, InputError)
    assert str(result.exception).startswith(f"port {port} on 127.0.0.1 is in use")
    assert "juge label: http" not in result.output


def test_serve_on_port_0_prints_the_port_it_listens_on(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "juge.cli",
            "label",
            "serve",
            "--port",
            "0",
            "--db-url",
            f"sqlite:///{tmp_path / 'l.db'}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = proc.stdout.readline()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", banner).group(1))
        assert port != 0
        assert f"raters log in at http://127.0.0.1:{port}/login?token=<their token>" in proc.stdout.readline()
        deadline = time.monotonic() + 120  # for a server that never listens; a loaded machine is slow
        while True:  # the printed port is the one that answers
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nothing listens on the printed port"
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


@pytest.mark.parametrize(
    "url, message",
    [
        ("notaurl", "--db-url 'notaurl' is not a database URL"),
        pytest.param(
            "postgresql+psycopg://juge:secret@127.0.0.1:1/labels",
            "--db-url postgresql+psycopg://juge:***@127.0.0.1:1/labels: cannot open the label database",
            marks=pytest.mark.needs("psycopg"),
        ),
    ],
)
def test_status_with_a_bad_or_unreachable_db_url_is_one_line(url: str, message: str) -> None:
    result = label("status", "q4", db_url=url)
    assert isinstance(result.exception, InputError), result.exception
    assert str(result.exception).startswith(message) and "\n" not in str(result.exception)
    assert "secret" not in str(result.exception)
