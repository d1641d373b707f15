"""Test infrastructure that ships with juge: a mock OpenAI-compatible model server with fault injection."""

from typing import Any

__all__ = ["FAULT_KINDS", "MockConfig", "expected_answer", "injected_fault", "serve_in_subprocess", "serve_in_thread"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `python -m juge.testing.mockserver` does not find the module
    # already imported by its own package (runpy warns of that).
    if name in __all__:
        from juge.testing import mockserver

        return getattr(mockserver, name)
    raise AttributeError(f"module 'juge.testing' has no attribute {name!r}")
