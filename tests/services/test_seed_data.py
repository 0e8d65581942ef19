"""The seed's texts cover every language and sentiment the app has, so demo data exercises them all."""

from __future__ import annotations

from app.models import SENTIMENTS
from app.services.seed_data import MESSAGES, TAG_NAMES
from app.services.sentiment import analyze
from app.services.tags import MAX_TAG_LENGTH, normalize_tag


def test_every_language_has_messages_of_every_sentiment():
    assert set(MESSAGES) == {"en", "es", "pt"}
    for by_sentiment in MESSAGES.values():
        assert set(by_sentiment) == set(SENTIMENTS)
        assert all(texts for texts in by_sentiment.values())


def test_each_message_reads_as_the_sentiment_it_is_filed_under_or_neutral():
    for language, by_sentiment in MESSAGES.items():
        for sentiment, texts in by_sentiment.items():
            for text in texts:
                assert analyze(text, language) in (sentiment, "neutral"), (language, sentiment, text)


def test_tag_names_are_valid_tags():
    assert all(name == normalize_tag(name) and len(name) <= MAX_TAG_LENGTH for name in TAG_NAMES)
