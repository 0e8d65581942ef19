"""Settings read from the environment."""

from __future__ import annotations

import pytest

from app.config import QUOTA_VARIABLES, Quotas, load_settings


def _settings(tmp_path, **env: str):
    return load_settings({"EARFUL_DATA_DIR": str(tmp_path), "EARFUL_SECRET_KEY": "k", **env})


def test_sessions_end_after_twelve_idle_hours_by_default(tmp_path):
    assert _settings(tmp_path).session_idle_minutes == 720


def test_the_idle_limit_of_sessions_is_read_in_minutes(tmp_path):
    assert _settings(tmp_path, EARFUL_SESSION_IDLE_MINUTES="30").session_idle_minutes == 30


@pytest.mark.parametrize("value", ["0", "-5", "12h", "1.5"])
def test_an_idle_limit_that_is_not_a_positive_whole_number_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match="EARFUL_SESSION_IDLE_MINUTES"):
        _settings(tmp_path, EARFUL_SESSION_IDLE_MINUTES=value)


def test_capture_quotas_have_their_defaults(tmp_path):
    assert _settings(tmp_path).quotas == Quotas()


def test_each_capture_quota_is_read_from_its_variable(tmp_path):
    env = {variable: str(100 + n) for n, variable in enumerate(QUOTA_VARIABLES.values())}

    quotas = _settings(tmp_path, **env).quotas

    assert [getattr(quotas, name) for name in QUOTA_VARIABLES] == list(range(100, 100 + len(env)))


def test_a_quota_that_is_not_a_positive_whole_number_is_refused(tmp_path):
    with pytest.raises(ValueError, match="EARFUL_MAX_TAGS_PER_SUBMIT"):
        _settings(tmp_path, EARFUL_MAX_TAGS_PER_SUBMIT="0")


def test_rate_limits_are_kept_in_memory_unless_a_redis_is_named(tmp_path):
    settings = _settings(tmp_path)
    assert settings.redis_url is None
    assert settings.redis_key_prefix == "earful"


def test_the_redis_of_the_rate_limits_is_read_with_its_prefix(tmp_path):
    settings = _settings(
        tmp_path, EARFUL_REDIS_URL="redis://127.0.0.1:6379/2", EARFUL_REDIS_KEY_PREFIX="shop"
    )
    assert (settings.redis_url, settings.redis_key_prefix) == ("redis://127.0.0.1:6379/2", "shop")


def test_a_redis_url_of_another_scheme_is_refused(tmp_path):
    with pytest.raises(ValueError, match="EARFUL_REDIS_URL"):
        _settings(tmp_path, EARFUL_REDIS_URL="http://127.0.0.1:6379")


def test_files_stay_in_the_data_dir_unless_a_bucket_is_named(tmp_path):
    assert _settings(tmp_path).storage_url is None
    assert _settings(tmp_path, EARFUL_STORAGE_URL=" s3://files/earful ").storage_url == "s3://files/earful"


@pytest.mark.parametrize("value", ["s3://", "https://files.example.com", "/srv/files"])
def test_a_storage_url_that_is_not_a_bucket_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match="EARFUL_STORAGE_URL"):
        _settings(tmp_path, EARFUL_STORAGE_URL=value)


def test_default_rate_limits_are_read_from_their_variables(tmp_path):
    limits = _settings(
        tmp_path, EARFUL_SUBMITS_PER_MINUTE="3", EARFUL_SUBMITS_PER_MINUTE_TOTAL="50"
    ).capture_limits
    assert (limits.submits_per_minute, limits.opens_per_minute) == (3, 60)
    assert (limits.uploads_per_minute, limits.submits_per_minute_total) == (20, 50)
    with pytest.raises(ValueError, match="EARFUL_OPENS_PER_MINUTE"):
        _settings(tmp_path, EARFUL_OPENS_PER_MINUTE="0")


def test_retention_runs_every_ten_minutes_by_default(tmp_path):
    assert _settings(tmp_path).retention_seconds == 600


def test_the_retention_interval_is_read_in_seconds(tmp_path):
    assert _settings(tmp_path, EARFUL_RETENTION_SECONDS="45").retention_seconds == 45

    with pytest.raises(ValueError, match="EARFUL_RETENTION_SECONDS"):
        _settings(tmp_path, EARFUL_RETENTION_SECONDS="0")


def test_the_minimum_fill_time_is_two_seconds_unless_set(tmp_path):
    assert _settings(tmp_path).min_fill_seconds == 2.0
    assert _settings(tmp_path, EARFUL_MIN_FILL_SECONDS="0").min_fill_seconds == 0.0
    assert _settings(tmp_path, EARFUL_MIN_FILL_SECONDS="1.5").min_fill_seconds == 1.5


@pytest.mark.parametrize("raw", ["soon", "-1", "61", "nan"])
def test_a_minimum_fill_time_out_of_range_is_refused(tmp_path, raw):
    with pytest.raises(ValueError, match="EARFUL_MIN_FILL_SECONDS must be a number of seconds from 0 to 60"):
        _settings(tmp_path, EARFUL_MIN_FILL_SECONDS=raw)


def test_operations_settings_default_to_auto_logs_a_line_per_request_and_no_metrics(tmp_path):
    settings = _settings(tmp_path)

    assert (settings.log_format, settings.access_log) == ("auto", True)
    assert (settings.metrics_token, settings.metrics_bind, settings.graceful_timeout) == (None, None, 10)


def test_operations_settings_are_read(tmp_path):
    settings = _settings(
        tmp_path,
        EARFUL_LOG_FORMAT="JSON",
        EARFUL_ACCESS_LOG="0",
        EARFUL_METRICS_TOKEN=" t0ken ",
        EARFUL_METRICS_BIND="[::1]:9100",
        EARFUL_GRACEFUL_TIMEOUT="30",
    )

    assert (settings.log_format, settings.access_log) == ("json", False)
    assert (settings.metrics_token, settings.metrics_bind, settings.graceful_timeout) == (
        "t0ken",
        ("::1", 9100),
        30,
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("EARFUL_LOG_FORMAT", "xml"),
        ("EARFUL_METRICS_BIND", "9100"),
        ("EARFUL_METRICS_BIND", "127.0.0.1:http"),
        ("EARFUL_METRICS_BIND", "127.0.0.1:70000"),
        ("EARFUL_ACCESS_LOG", "maybe"),
    ],
)
def test_unusable_operations_settings_name_their_variable(tmp_path, variable, value):
    with pytest.raises(ValueError, match=variable):
        _settings(tmp_path, **{variable: value})
