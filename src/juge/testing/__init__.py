"""Test infrastructure that ships with juge: a mock OpenAI-compatible model server with fault injection."""

from juge.testing.mockserver import FAULT_KINDS, MockConfig, expected_answer, serve_in_subprocess, serve_in_thread

__all__ = ["FAULT_KINDS", "MockConfig", "expected_answer", "serve_in_subprocess", "serve_in_thread"]
