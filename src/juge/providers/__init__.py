"""Model providers behind one async protocol; see `juge.providers.base`."""

from juge.providers.base import Provider, ProviderError, Request, Response
from juge.providers.registry import make_provider, register_provider

__all__ = ["Provider", "ProviderError", "Request", "Response", "make_provider", "register_provider"]
