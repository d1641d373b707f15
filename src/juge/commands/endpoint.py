"""`--base-url`, `--api-key-env` and `--model`: the options of every command that calls a judge."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["ApiKeyEnvOption", "BaseUrlOption", "ModelOption"]

BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Server address, e.g. http://127.0.0.1:8080/v1 (a local OpenAI-compatible server needs no key). "
        "Implies --provider openai when no provider is given. Default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL.",
    ),
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY).",
    ),
]
ModelOption = Annotated[str | None, typer.Option("--model", help="Model for every judge, overriding the judge files.")]
