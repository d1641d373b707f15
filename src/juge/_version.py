"""The version of juge: the one place it is written (pyproject.toml reads it at build time)."""

__version__ = "0.2.0"
