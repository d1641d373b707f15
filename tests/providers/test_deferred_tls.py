"""aiohttp's default TLS contexts load the CA certificates at their first connection, not when juge imports aiohttp
(juge.providers.deferred_tls): the same certificates then, and TLS is verified as before on both event loops."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from test_transports import _certificates, stub

_LOADS = """
import json, ssl
from juge.providers.transport import make_transport
make_transport("aiohttp", timeout=None, max_response_bytes=1000, proxy=None, owner="t")  # imports aiohttp as juge does
import aiohttp.connector as connector

contexts = [connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED]
before = [c.cert_store_stats()["x509"] for c in contexts]
for c in contexts:
    c.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")
after = [c.cert_store_stats() for c in contexts]
reference = ssl.create_default_context().cert_store_stats()
print(json.dumps({"before": before, "after": after, "reference": reference,
                  "verify": [c.verify_mode == ssl.CERT_REQUIRED for c in contexts],
                  "patched": "set_default_verify_paths" in vars(ssl.SSLContext)}))
"""


def test_the_certificates_load_at_the_first_connection_and_are_the_default_ones() -> None:
    done = subprocess.run([sys.executable, "-c", _LOADS], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["after"][0] == found["reference"]  # what ssl.create_default_context() trusts
    assert found["after"][1] == found["reference"]  # aiohttp's unverified context loads them too, as before
    assert found["verify"] == [True, False]
    assert not found["patched"]  # ssl.SSLContext is as it was once aiohttp is imported
    if found["reference"]["x509"]:  # a system with CA certificates: none was read at import
        assert found["before"] == [0, 0]


CALL = """
import asyncio, os, sys
from juge.engine.loop import run_loop
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

print(run_loop(main()))
"""


@pytest.mark.parametrize("fast", ["1", "0"])  # uvloop, asyncio's loop
def test_tls_is_verified_on_either_loop(fast: str, tmp_path) -> None:
    pytest.importorskip("cryptography")
    ca_file, context = _certificates(tmp_path)
    said = {}
    with stub(tls=context) as server:
        url = f"https://127.0.0.1:{server.server_port}/v1"
        for trust in ("system", "custom"):
            env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
            env |= {"JUGE_FAST": fast, "JUGE_HTTP": "aiohttp", "NO_PROXY": "*"}
            if trust == "custom":
                env["SSL_CERT_FILE"] = str(ca_file)
            done = subprocess.run(
                [sys.executable, "-c", CALL, url], capture_output=True, text=True, env=env, timeout=60
            )
            said[trust] = done.stdout.strip() or done.stderr[-500:]
    assert said["system"].startswith("refused connection failed") and "certificate" in said["system"].lower(), said
    assert said["custom"] == "answered PASS", said
