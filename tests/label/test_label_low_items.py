"""The labelling app's low items of issue 27: the sign-in limiter counts the socket's peer unless
--trusted-proxy names one; the CSRF token changes on sign-out, rotate-link and revoke; `label export -o x.csv`
writes CSV (and a suffix that names no format it writes is refused)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from cli_helpers import run_cli
from juge.label.app import create_app
from juge.label.db import LabelStore
from label_helpers import hidden, make_project, sign_in


@pytest.fixture
def store(tmp_path: Path) -> LabelStore:
    s = LabelStore(f"sqlite:///{tmp_path / 'juge.db'}")
    yield s
    s.close()


def serve(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    """`juge label serve --port 0` (uvicorn, as a user runs it) and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "juge.cli", "label", "serve", "--port", "0", *options,
         "--db-url", f"sqlite:///{tmp_path / 'juge.db'}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    banner = proc.stdout.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+)/", banner)
    if found is None:
        proc.kill()
        raise AssertionError(banner + proc.stdout.read())
    url = found.group(1)
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url + "/static/label.css", trust_env=False, timeout=2)
            return proc, url
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not answer"
            time.sleep(0.1)


def tries(url: str, forwarded: list[str | None]) -> list[int]:
    """Statuses of one bad sign-in each, with these X-Forwarded-For headers (None: none)."""
    with httpx.Client(trust_env=False, timeout=10) as client:
        return [
            client.get(
                url + "/login", params={"token": "guess"}, headers={"X-Forwarded-For": f} if f else {}
            ).status_code
            for f in forwarded
        ]


@pytest.mark.slow
def test_the_limiter_counts_the_sockets_peer_and_a_trusted_proxys_forwarded_address(tmp_path) -> None:
    LabelStore(f"sqlite:///{tmp_path / 'juge.db'}").close()
    proc, url = serve(tmp_path)
    try:  # a header anyone can send does not spread the guesses over made-up addresses
        assert tries(url, [f"203.0.113.{k}" for k in range(11)]) == [401] * 10 + [429]
        assert tries(url, [None]) == [429]
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    proc, url = serve(tmp_path, "--trusted-proxy", "127.0.0.1")
    try:  # behind a proxy, each client has its own budget
        assert tries(url, ["198.51.100.1"] * 11) == [401] * 10 + [429]
        assert tries(url, ["198.51.100.2", "10.0.0.9, 198.51.100.3"]) == [401, 401]
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def test_trusted_proxy_must_be_an_ip_address(tmp_path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "label", "serve", "--trusted-proxy", "my-proxy", "--db-url", f"sqlite:///{tmp_path}/j.db"
    )
    assert code == 2 and "--trusted-proxy" in err


def test_only_the_trusted_proxy_is_believed(store, tmp_path) -> None:
    make_project(store, tmp_path, 2)
    for trusted, expected in ((None, [401] * 10 + [429]), ("10.1.1.1", [401] * 10 + [429]), ("127.0.0.1", [401] * 11)):
        app = create_app(store, trusted_proxy=trusted)
        client = TestClient(app, follow_redirects=False, client=("127.0.0.1", 5555))
        got = [
            client.get("/login", params={"token": "g"}, headers={"X-Forwarded-For": f"203.0.113.{k}"}).status_code
            for k in range(11)
        ]
        assert got == expected, trusted


def post_with(client: TestClient, csrf: str) -> int:
    return client.post("/break", data={"csrf": csrf}).status_code


@pytest.mark.parametrize("how", ["logout", "rotate-link", "revoke-rater"])
def test_the_csrf_token_changes_on_sign_out_rotate_and_revoke(store, tmp_path, monkeypatch, capsys, how) -> None:
    project = make_project(store, tmp_path, 2)
    token = store.add_rater(project, "alice")
    before = store.rater(project, "alice").csrf
    client = TestClient(create_app(store), follow_redirects=False)
    assert sign_in(client, token).status_code == 303
    page = client.get("/item").text
    assert hidden(page, "csrf") == before
    if how == "logout":
        assert client.post(f"/logout?p={project.id}", data={"csrf": before}).status_code == 200
    else:
        code, _, err = run_cli(
            monkeypatch, capsys, "label", how, "alice", "--db-url", f"sqlite:///{tmp_path / 'juge.db'}"
        )
        assert code == 0, err
    after = store.rater(project, "alice").csrf
    assert after != before
    if how != "revoke-rater":  # signed in again (a new link after rotate-link): the old page's form is refused
        new = token if how == "logout" else store.rotate_link(project, "alice")
        after = store.rater(project, "alice").csrf
        assert sign_in(client, new).status_code == 303
        assert post_with(client, before) == 403
        assert hidden(client.get("/item").text, "csrf") == after


def labelled(store: LabelStore, tmp_path: Path) -> str:
    """A project where alice labelled one item with a note that starts like a spreadsheet formula."""
    project = make_project(store, tmp_path, 2)
    client = TestClient(create_app(store), follow_redirects=False)
    assert sign_in(client, store.add_rater(project, "alice")).status_code == 303
    page = client.get("/item").text
    form = {"csrf": hidden(page, "csrf"), "assignment": hidden(page, "assignment"), "choice": "tie"}
    r = client.post("/label", data={**form, "explanation": '=HYPERLINK("http://x","a, \'quoted\' note")'})
    assert r.status_code == 303, r.text
    return f"sqlite:///{tmp_path / 'juge.db'}"


def test_label_export_writes_csv_for_a_csv_suffix_and_jsonl_for_jsonl(store, tmp_path, monkeypatch, capsys) -> None:
    url = labelled(store, tmp_path)
    for name in ("x.csv", "x.jsonl"):
        code, _, err = run_cli(monkeypatch, capsys, "label", "export", "-o", str(tmp_path / name), "--db-url", url)
        assert code == 0, err
    (row,) = list(csv.DictReader((tmp_path / "x.csv").open(encoding="utf-8")))
    (line,) = [json.loads(x) for x in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert set(row) == set(line) and row["rater_id"] == line["rater_id"] == "alice" and row["label"] == line["label"]
    assert row["explanation"] == "'" + line["explanation"]  # a formula made inert for a spreadsheet
    code, _, err = run_cli(
        monkeypatch, capsys, "label", "export", "-o", str(tmp_path / "y.jsonl"),
        "--adjudications", str(tmp_path / "finals.csv"), "--db-url", url,
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "finals.csv").read_text() == "item_id,label,reason,adjudicator\n"  # none yet: the header


@pytest.mark.parametrize("name", ["x.json", "x.xlsx", "x", "x.tsv"])
def test_label_export_refuses_a_suffix_that_names_no_format_it_writes(store, tmp_path, monkeypatch, capsys, name):
    url = labelled(store, tmp_path)
    code, _, err = run_cli(monkeypatch, capsys, "label", "export", "-o", str(tmp_path / name), "--db-url", url)
    assert code == 2 and "-o" in err and ".csv" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / name).exists()
