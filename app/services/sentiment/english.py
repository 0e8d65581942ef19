"""English: TextBlob's lexicon at the core, with VADER's words, feedback vocabulary and rules.

TextBlob's own ``TextBlob(text).sentiment`` is slower than the analyzer's budget per message
(stack notes §9) and ignores negation for most words, contrast and
emoji. So the analyzer reads TextBlob's bundled lexicon (``en-sentiment.xml``, PDDL) from the
installed package and scores with the shared rule engine: TextBlob's polarity counts wherever
TextBlob knows a word (averaged with VADER's valence when VADER knows it too; TextBlob alone
rates "love" only 0.5), VADER's lexicon and Earful's feedback words fill the gaps.
"""

from __future__ import annotations

from app.services.sentiment.base import label_from_thresholds
from app.services.sentiment.engine import Rules, load_rules, score

# TextBlob polarity is in [-1, 1]; VADER's valences are in [-4, 4].
TEXTBLOB_SCALE = 3.0
# The neutral band, chosen on the dev set and a second sample of the same sources together
# (600 messages; see README, "Sentiment").
POSITIVE_AT = 0.4
NEGATIVE_AT = -0.1


def _textblob_words() -> dict[str, float]:
    """Each word's average polarity across its senses, from TextBlob's lexicon.

    Imported here, when the rules are first built (a server's start-up, see
    :func:`app.services.sentiment.warm_up`): TextBlob brings NLTK, 0.35 s of every ``earful``
    command's 1.6 s of imports, which the commands that score nothing need not pay."""
    from textblob.en import sentiment as textblob_lexicon  # type: ignore[import-untyped]  # no type hints shipped

    textblob_lexicon.load()
    words: dict[str, float] = {}
    for word, senses in textblob_lexicon.items():
        polarity = senses.get(None, next(iter(senses.values())))[0]
        if polarity and " " not in word:
            words[word.lower()] = polarity * TEXTBLOB_SCALE
    return words


def english_rules() -> Rules:
    """TextBlob's lexicon (averaged with VADER's where both know a word), VADER's other words,
    then Earful's feedback words and phrases, its rules and emoji."""
    rules = load_rules("en-vader.tsv")
    for word, polarity in _textblob_words().items():
        vader = rules.words.get(word)
        rules.words[word] = polarity if vader is None else (polarity + vader) / 2
    extra = load_rules("en-feedback.txt", "en.txt", "emoji.tsv")
    rules.words.update(extra.words)
    rules.phrases.update(extra.phrases)
    rules.stems.update(extra.stems)
    rules.boosters, rules.negators, rules.contrast = extra.boosters, extra.negators, extra.contrast
    rules.stopwords = extra.stopwords
    return rules.finish()


class EnglishAnalyzer:
    """Lexicon score with negation, contrast, intensifiers, emoji and emphasis."""

    def __init__(self) -> None:
        self._rules: Rules | None = None

    @property
    def rules(self) -> Rules:
        if self._rules is None:
            self._rules = english_rules()
        return self._rules

    def polarity(self, text: str) -> float:
        return score(text, self.rules)

    def label(self, text: str) -> str:
        return label_from_thresholds(self.polarity(text), POSITIVE_AT, NEGATIVE_AT)
