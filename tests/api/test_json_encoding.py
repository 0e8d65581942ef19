"""How the APIs encode their JSON answers (app.representations.encode_json)."""

from __future__ import annotations

import json

from app.representations import encode_json
from tests.factories import make_thread


def test_an_answer_is_compact_utf8_json() -> None:
    encoded = encode_json({"message": "Très bien — 好", "tags": ["a"], "nps": None})

    assert encoded == '{"message":"Très bien — 好","tags":["a"],"nps":null}'.encode()


def test_keys_that_are_not_strings_are_written_as_strings() -> None:
    encoded = encode_json({"counts": {7: 2, 11: 0}})

    assert encoded == b'{"counts":{"7":2,"11":0}}'


def test_what_orjson_refuses_is_still_encoded() -> None:
    payload = {"message": "lone \ud800 surrogate", "count": 2**70}

    encoded = encode_json(payload)

    assert json.loads(encoded) == payload


async def test_a_list_answer_decodes_to_the_threads_sent(api, token, application) -> None:
    sent = {"email": "zoë@example.com", "message": "Ça marche pas 🙁", "properties": {"ключ": 1.5}}
    await make_thread(application, **sent)

    listed = await api.get(f"/applications/{application.id}/feedback", token)

    thread = (await listed.get_json())["data"][0]
    assert {name: thread[name] for name in sent} == sent
