"""A submit's validation: the specification's order and messages, and what each field becomes."""

from __future__ import annotations

import pytest

from app.config import Quotas
from app.errors import ValidationError
from app.services.submissions import MAX_MESSAGE_LENGTH, parse_submission
from app.services.tags import MAX_TAG_LENGTH

VALID = {"email": "Ann@Example.org", "message": "  The export fails.  "}


def parse(**fields: object):
    return parse_submission({**VALID, **fields}, "203.0.113.7", "agent/1.0")


def test_a_valid_submit_is_cleaned():
    submission = parse(tags="Bug, UI ,bug", properties='{"plan": "pro"}', nps="7", language="es")

    assert (submission.email, submission.message) == ("ann@example.org", "The export fails.")
    assert submission.tags == ("bug", "ui")
    assert submission.properties == {"plan": "pro"}
    assert (submission.nps, submission.language, submission.language_given) == (7, "es", True)
    assert (submission.ip_address, submission.user_agent) == ("203.0.113.7", "agent/1.0")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"email": None, "message": None}, "Your email address is required"),
        ({"email": "nope", "message": None}, "Invalid email address"),
        ({"message": ""}, "Your message is required"),
        ({"message": "hi"}, "Your message is too short"),
        ({"message": "x" * (MAX_MESSAGE_LENGTH + 1)}, "Your message is too long"),
        ({"nps": 11}, "Invalid NPS rating"),
        ({"sentiment": "furious"}, "Invalid sentiment"),
        ({"tags": "[1, 2]"}, "Invalid tags"),
        ({"properties": 5}, "Invalid properties"),
        ({"attachments": ["x"]}, "Invalid attachments"),
        ({"ip": "999.0.0.1"}, "Invalid IP address"),
    ],
)
def test_invalid_submits_say_what_is_wrong_in_the_specifications_order(fields, message):
    with pytest.raises(ValidationError) as refused:
        parse(**fields)

    assert refused.value.message == message


def test_a_given_ip_wins_over_the_callers_and_is_normalized():
    assert parse(ip="2001:DB8::1").ip_address == "2001:db8::1"


def test_attachments_are_deduplicated_in_order():
    assert parse(attachments=[3, "2", 3]).attachments == (3, 2)


def test_without_a_language_it_is_english_and_detected_later():
    submission = parse()

    assert (submission.language, submission.language_given) == ("en", False)


def test_more_tags_than_the_quota_are_refused():
    with pytest.raises(ValidationError, match="Too many tags"):
        parse(tags=[f"t{n}" for n in range(Quotas().tags_per_submit + 1)])


def test_tags_up_to_the_quota_are_kept():
    assert len(parse(tags=[f"t{n}" for n in range(Quotas().tags_per_submit)]).tags) == 10


def test_a_tag_longer_than_the_quota_is_refused_not_cut():
    with pytest.raises(ValidationError, match="Tag name too long"):
        parse(tags=["x" * (Quotas().tag_length + 1)])


def test_a_tag_length_quota_past_the_column_is_held_to_the_column():
    quotas = Quotas(tag_length=500)

    with pytest.raises(ValidationError, match="Tag name too long"):
        parse_submission({**VALID, "tags": ["x" * (MAX_TAG_LENGTH + 1)]}, "203.0.113.7", "a", quotas)


def test_more_attachments_than_the_quota_are_refused():
    with pytest.raises(ValidationError, match="Too many files"):
        parse(attachments=list(range(1, Quotas().files_per_thread + 2)))


def test_properties_over_the_quota_are_refused():
    with pytest.raises(ValidationError, match="Properties too large"):
        parse(properties={"notes": "x" * Quotas().properties_bytes})


def test_quotas_are_the_callers():
    quotas = Quotas(tags_per_submit=2)

    with pytest.raises(ValidationError, match="Too many tags"):
        parse_submission({**VALID, "tags": "a,b,c"}, "203.0.113.7", "agent/1.0", quotas)
