"""Built-in probe sets that measure a judge's robustness (see DATA.md for where their data comes from)."""
