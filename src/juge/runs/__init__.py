"""Stored runs: summaries, comparisons between runs, pass rates corrected by human labels."""
