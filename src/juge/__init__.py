"""juge: make LLM-as-a-judge evaluation trustworthy."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("juge")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+local"

from juge.data.records import Case, HumanLabel, Judgment, Message

__all__ = ["Case", "HumanLabel", "Judgment", "Message", "__version__"]
