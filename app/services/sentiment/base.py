"""The analyzer interface and the mapping of a polarity score to a label."""

from __future__ import annotations

from typing import Protocol


class Analyzer(Protocol):
    """Labels one language's text as positive, neutral or negative."""

    def label(self, text: str) -> str: ...


def label_from_polarity(polarity: float, threshold: float) -> str:
    """Map a score in [-1, 1] to a label, with a neutral band of +/- ``threshold``."""
    if polarity > threshold:
        return "positive"
    if polarity < -threshold:
        return "negative"
    return "neutral"
