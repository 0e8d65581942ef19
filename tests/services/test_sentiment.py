"""The sentiment analyzers: clear cases per language, negation, contrast, emoji, detection."""

from __future__ import annotations

import unicodedata

import pytest

from app.services import sentiment
from app.services.sentiment import HEAD_CHARS, TAIL_CHARS, analyze, detect_language, excerpt
from app.services.sentiment.base import label_from_thresholds
from app.services.sentiment.engine import fold, load_rules, score


@pytest.mark.parametrize(
    ("text", "language", "label"),
    [
        ("I love this app, it is great", "en", "positive"),
        ("This is terrible, it crashes all the time", "en", "negative"),
        ("Excellent support, thank you so much!", "en", "positive"),
        ("The export button does not work and nobody answers", "en", "negative"),
        ("Me encanta, es genial y muy fácil de usar", "es", "positive"),
        ("No funciona, es una basura, quiero la devolución", "es", "negative"),
        ("Muy buena calidad, lo recomiendo", "es", "positive"),
        ("Pésimo servicio, el pedido llegó roto", "es", "negative"),
        ("Adorei o aplicativo, muito bom", "pt", "positive"),
        ("Produto excelente, chegou antes do prazo", "pt", "positive"),
        ("Não recebi meu pedido até agora, péssimo", "pt", "negative"),
        ("Horrível, veio quebrado e ninguém responde", "pt", "negative"),
    ],
)
def test_clear_messages_get_their_label(text, language, label):
    assert analyze(text, language) == label


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How do I export my data to CSV?", "en"),
        ("¿Dónde puedo cambiar mi contraseña?", "es"),
        ("Onde eu altero o meu e-mail?", "pt"),
    ],
)
def test_plain_questions_are_neutral(text, language):
    assert analyze(text, language) == "neutral"


@pytest.mark.parametrize(
    ("positive", "negated", "language"),
    [
        ("I like it, it is good", "I don't like it, it is not good", "en"),
        ("Me gusta, es bueno", "No me gusta, no es bueno", "es"),
        ("Gostei, é bom", "Não gostei, não é bom", "pt"),
    ],
)
def test_negation_flips_a_positive_message(positive, negated, language):
    assert analyze(positive, language) == "positive"
    assert analyze(negated, language) == "negative"


def test_a_negated_negative_word_is_not_negative():
    assert analyze("Not bad at all", "en") != "negative"


@pytest.mark.parametrize(
    ("text", "language", "label"),
    [
        ("The design is nice but it crashes every time and support is useless", "en", "negative"),
        ("Tardó un poco en llegar, pero es perfecto y me encanta", "es", "positive"),
        ("A entrega atrasou, mas o produto é ótimo e lindo", "pt", "positive"),
    ],
)
def test_what_follows_a_contrast_weighs_more(text, language, label):
    assert analyze(text, language) == label


def test_intensifiers_and_exclamations_strengthen_the_score():
    rules = sentiment._ANALYZERS["en"].rules  # type: ignore[attr-defined]
    plain = score("The app is good", rules)

    assert score("The app is very good", rules) > plain
    assert score("The app is good!!!", rules) > plain


@pytest.mark.parametrize(
    ("text", "language", "label"),
    [
        ("Un servicio magnífico", "es", "positive"),
        ("El diseño es muy feo", "es", "negative"),
        ("Llegó con una pata rajada", "es", "negative"),
        ("Que produto paia, veio amassado", "pt", "negative"),
        ("Acabamento tosco e zoado", "pt", "negative"),
    ],
)
def test_the_general_word_lists_cover_everyday_words(text, language, label):
    assert analyze(text, language) == label


def test_emoji_carry_sentiment():
    assert analyze("😍😍", "en") == "positive"
    assert analyze("👎😡", "es") == "negative"
    assert analyze("🤡🤥", "pt") == "negative"


def test_accents_are_optional():
    assert analyze("Pessimo, nao recebi", "pt") == analyze("Péssimo, não recebi", "pt") == "negative"
    assert fold("Ação RÁPIDA") == "acao rapida"


def test_repeated_letters_still_match():
    assert analyze("I looooove it", "en") == "positive"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("I love this app, the export is great", "en"),
        ("The app keeps crashing when I open the settings", "en"),
        ("No me gusta nada, es horrible", "es"),
        ("El pedido no ha llegado todavía y nadie contesta", "es"),
        ("Adorei o aplicativo, muito bom", "pt"),
        ("Ainda não recebi o produto, estou aguardando", "pt"),
    ],
)
def test_the_language_is_detected_from_the_text(text, language):
    assert detect_language(text) == language


def test_text_without_clues_is_taken_as_english():
    assert detect_language("12345 !!!") == "en"


def test_analyze_without_a_language_detects_it():
    assert analyze("No me gusta nada, es horrible") == "negative"
    assert analyze("Adorei o aplicativo, muito bom", None) == "positive"


def test_an_unknown_language_falls_back_to_english():
    assert analyze("I love it", "de") == "positive"


def test_registered_analyzers_are_used():
    class Always:
        def label(self, text: str) -> str:
            return "neutral"

    sentiment.register("xx", Always())
    try:
        assert analyze("I love it", "xx") == "neutral"
    finally:
        sentiment._ANALYZERS.pop("xx")


def test_thresholds_bound_the_neutral_band():
    assert label_from_thresholds(0.5, 0.4, -0.1) == "positive"
    assert label_from_thresholds(0.0, 0.4, -0.1) == "neutral"
    assert label_from_thresholds(-0.2, 0.4, -0.1) == "negative"


def test_data_files_load_phrases_stems_and_sections():
    rules = load_rules("es.txt")

    assert rules.valence("maravilloso") > 0  # stem maravill*
    assert ("no", "funciona") in rules.phrases
    assert "pero" in rules.contrast and "no" in rules.negators and "muy" in rules.boosters


def test_empty_and_symbol_only_texts_are_neutral():
    assert analyze("", "en") == "neutral"
    assert analyze("... ---", "es") == "neutral"


@pytest.mark.parametrize(
    "text",
    [
        *("Não é ÓTIMO", "naïve café", "¿Qué pasó?", "ﬁne ²", "e\u0301 e\u034f", "שָׁלוֹם"),
        *("\uff21\uff50\uff50 👍🏽", "plain"),
    ],
)
def test_folding_strips_every_combining_mark_as_nfkd_does(text):
    expected = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))

    assert fold(text) == expected


def test_a_short_message_is_read_whole():
    text = "word " * ((HEAD_CHARS + TAIL_CHARS) // 5)

    assert excerpt(text) == text


def test_a_long_message_is_read_at_its_start_and_its_end():
    text = "Great start. " + "filler words here " * 1000 + "It is broken and useless."

    read = excerpt(text)

    assert read.startswith("Great start.")
    assert read.endswith("It is broken and useless.")
    assert len(read) <= HEAD_CHARS + TAIL_CHARS + 3
    assert analyze(text, "en") == analyze(read, "en")
