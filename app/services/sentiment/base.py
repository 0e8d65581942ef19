"""The analyzer interface and the mapping of a polarity score to a label."""

from __future__ import annotations

from typing import Protocol


class Analyzer(Protocol):
    """Labels one language's text as positive, neutral or negative."""

    def label(self, text: str) -> str: ...


def label_from_polarity(polarity: float, threshold: float) -> str:
    """Map a score in [-1, 1] to a label, with a neutral band of +/- ``threshold``."""
    return label_from_thresholds(polarity, threshold, -threshold)


def label_from_thresholds(polarity: float, positive_at: float, negative_at: float) -> str:
    """Map a score in [-1, 1] to a label: above ``positive_at``, below ``negative_at``, else neutral."""
    if polarity > positive_at:
        return "positive"
    if polarity < negative_at:
        return "negative"
    return "neutral"
