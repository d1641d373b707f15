"""Records, readers with file:line errors, sampling and splits."""

from juge.data.records import OUTCOMES, Case, HumanLabel, Judgment, Message, Outcome

__all__ = ["OUTCOMES", "Case", "HumanLabel", "Judgment", "Message", "Outcome"]
