"""Helpers for the labelling app tests: cases, rubric, page parsing, a live server, a PostgreSQL server."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from glob import glob
from pathlib import Path

import httpx

from juge.data.records import Case
from juge.label.db import LabelStore, Project
from juge.label.rubric import read_rubric

XSS_SCRIPT = "<script>alert('x')</script>"
XSS_IMG = '<img src=x onerror="alert(1)">'

RUBRIC_TOML = """\
name = "helpfulness"
description = "Which answer helps the user more: correct, complete, clear."
levels = { 1 = "Useless or wrong", 2 = "Partly helpful", 3 = "Fully helpful" }

[criteria.correctness]
description = "Facts, numbers and code are right."
levels = { 1 = "Mostly wrong", 2 = "Minor errors", 3 = "Correct" }
"""


def pair_case(i: int) -> Case:
    """A pair whose answers say which slot they are in, with a model name only in meta."""
    return Case(
        id=f"item-{i:04d}",
        question=f"Question number {i}?",
        output_1=f"FIRST answer {i} {XSS_SCRIPT}",
        output_2=f"SECOND answer {i} {XSS_IMG}",
        meta={"model_1": "secret-model-alpha", "model_2": "secret-model-beta"},
    )


def score_case(i: int) -> Case:
    return Case(id=f"item-{i:04d}", question=f"Question number {i}?", output=f"ONLY answer {i} {XSS_SCRIPT}")


def write_cases(path: Path, cases: list[Case]) -> Path:
    path.write_text("".join(c.model_dump_json(exclude_none=True) + "\n" for c in cases), encoding="utf-8")
    return path


def write_rubric(path: Path) -> Path:
    path.write_text(RUBRIC_TOML, encoding="utf-8")
    return path


def make_project(
    store: LabelStore, tmp: Path, n: int, *, task: str = "pairwise", name: str = "proj", **settings: object
) -> Project:
    rubric = read_rubric(write_rubric(tmp / "rubric.toml"), task)
    cases = [pair_case(i) if task == "pairwise" else score_case(i) for i in range(n)]
    return store.create_project(name, task, rubric, cases, **settings)  # type: ignore[arg-type]


def hidden(page: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert match, f"no hidden field {name!r} in page"
    return html.unescape(match.group(1))


def sign_in(client: httpx.Client, token: str) -> httpx.Response:
    """Open the login link and press "Sign in", as a rater does (TestClient or httpx.Client, no redirects).

    Returns the response to the sign-in POST (303 to the project on success).
    """
    page = client.get("/login", params={"token": token})
    if page.status_code != 200:
        return page
    return client.post("/login", data={"token": hidden(page.text, "token"), "nonce": hidden(page.text, "nonce")})


def shown_item(page: str) -> tuple[int, bool | None]:
    """(item number, swapped?) read from the rendered page; swapped None for single answers."""
    number = int(re.search(r"Question number (\d+)\?", page).group(1))
    answers = re.findall(r'<pre class="text">(FIRST|SECOND|ONLY) answer', page)
    if answers == ["ONLY"]:
        return number, None
    assert sorted(answers) == ["FIRST", "SECOND"], answers
    return number, answers[0] == "SECOND"


def expected_fixed(choice: str, swapped: bool) -> str:
    """What a positional choice means in the fixed order, written out independently of the app."""
    if choice == "tie":
        return "tie"
    left = "B" if swapped else "A"
    right = "A" if swapped else "B"
    return left if choice == "left" else right


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server(db_url: str, start_within: float = 180) -> Iterator[str]:
    """`juge label serve` in a subprocess on a port of its choosing; yields its base URL and stops it after.

    `--port 0` lets the server pick a free port and print it: a port picked here would be free only
    until some other process took it. The deadline is for a server that never comes up; a cold start
    (importing the app) on a loaded machine takes seconds, so it is generous."""
    fd, log_name = tempfile.mkstemp(prefix="juge-label-serve-", suffix=".log")
    log = Path(log_name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "juge.cli", "label", "serve", "--port", "0", "--db-url", db_url],
        stdout=fd,
        stderr=subprocess.STDOUT,
    )
    os.close(fd)
    try:
        deadline = time.monotonic() + start_within
        base = None
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text(errors='replace')}")
            if base is None and (found := re.search(r"juge label: (http://127\.0\.0\.1:\d+)/", log.read_text())):
                base = found[1]
            if base is not None:
                try:
                    httpx.get(base + "/item", timeout=5, trust_env=False)
                    break
                except httpx.TransportError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server did not start in {start_within:g} s: {log.read_text(errors='replace')}")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        print("server log:\n" + log.read_text(errors="replace")[-5000:])  # shown by pytest on failure
        log.unlink()


def postgres_bin() -> Path | None:
    found = sorted(glob("/usr/lib/postgresql/*/bin/postgres"))
    if found:
        return Path(found[-1]).parent
    exe = shutil.which("postgres")
    return Path(exe).parent if exe else None


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 (trust auth); yields a URL prefix without database.

    initdb refuses to run as root, so as root the cluster belongs to the `postgres` system user.
    """
    bindir = postgres_bin()
    if bindir is None:
        raise FileNotFoundError("no PostgreSQL server binary (install the Debian package 'postgresql')")
    as_user: list[str] = []
    data = Path(tempfile.mkdtemp(prefix="juge-pg-"))
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(data, "postgres", "postgres")
    pgdata = data / "data"
    run = lambda *cmd: subprocess.run([*as_user, *cmd], check=True, capture_output=True, text=True)  # noqa: E731
    run(str(bindir / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    # free_port() closes its socket before postgres binds, so another process may take the port in
    # between: a start that fails for that reason is retried on a fresh port.
    for attempt in range(5):
        port = free_port()
        try:
            run(
                str(bindir / "pg_ctl"),
                "-D",
                str(pgdata),
                "-w",
                "-t",
                "60",
                "-l",
                str(data / "log"),
                "-o",
                f"-h 127.0.0.1 -p {port} -k {data} -c fsync=off -c max_connections=200",
                "start",
            )
            break
        except subprocess.CalledProcessError:
            log = (data / "log").read_text(errors="replace") if (data / "log").exists() else ""
            if attempt == 4 or "could not bind" not in log:
                raise
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(pgdata), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(data, ignore_errors=True)


def create_database(server_url: str, name: str) -> str:
    import psycopg

    dsn = server_url.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
