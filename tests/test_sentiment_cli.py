"""``earful sentiment`` and ``earful sentiment-eval`` (app.sentiment_cli)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from app.sentiment_cli import main


def test_a_text_prints_its_label(capsys):
    assert main(["sentiment", "I love this app, it is great"]) == 0
    assert capsys.readouterr().out == "positive\n"


def test_the_language_option_is_used(capsys):
    assert main(["sentiment", "No me gusta nada, es horrible", "--language", "es"]) == 0
    assert capsys.readouterr().out == "negative\n"


def test_jsonl_prints_one_label_line_per_input_in_order(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(row)
            for row in [
                {"text": "This is terrible, it crashes all the time", "lang": "en"},
                {"text": "Adorei o aplicativo, muito bom"},
                {"text": "¿Dónde puedo cambiar mi contraseña?", "lang": "es"},
            ]
        )
        + "\n",
        encoding="utf-8",
    )

    assert main(["sentiment", "--jsonl", str(source)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"label": "negative"},
        {"label": "positive"},
        {"label": "neutral"},
    ]


def test_jsonl_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"text": "Excelente, lo recomiendo", "lang": "es"}\n'))

    assert main(["sentiment", "--jsonl", "-"]) == 0
    assert capsys.readouterr().out == '{"label": "positive"}\n'


def test_a_bad_jsonl_line_is_an_error(tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"text": "ok fine"}\nnot json\n', encoding="utf-8")

    assert main(["sentiment", "--jsonl", str(source)]) == 1
    assert "line 2" in capsys.readouterr().err


def test_no_text_is_a_usage_error(capsys):
    assert main(["sentiment"]) == 2
    assert "give a text" in capsys.readouterr().err


def test_evaluation_prints_the_table_and_the_confusion_matrix(tmp_path, capsys):
    source = tmp_path / "labelled.jsonl"
    rows = [
        {"text": "I love this app, it is great", "label": "positive", "lang": "en"},
        {"text": "This is terrible, it crashes all the time", "label": "negative", "lang": "en"},
        {"text": "Adorei o aplicativo, muito bom", "label": "positive", "lang": "pt"},
        {"text": "How do I export my data?", "label": "neutral", "lang": "en"},
    ]
    source.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")

    assert main(["sentiment-eval", str(source), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "macro-F1" in out and "µs/msg" in out
    assert "p99 µs" in out and "max µs" in out
    assert "en: confusion" in out and "pt: confusion" in out
    en_row = next(line for line in out.splitlines() if line.startswith("en "))
    assert en_row.split()[1:3] == ["3", "1.000"]


def test_a_missing_evaluation_file_is_an_error(tmp_path, capsys):
    assert main(["sentiment-eval", str(tmp_path / "nope.jsonl")]) == 1
    assert "earful:" in capsys.readouterr().err


def test_the_module_runs_as_a_command():
    result = subprocess.run(
        [sys.executable, "-m", "app.sentiment_cli", "sentiment", "Adorei, muito bom"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == "positive\n"
