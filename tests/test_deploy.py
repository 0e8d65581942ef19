"""The files of deploy/ are well-formed and agree with Earful: systemd units that
``systemd-analyze verify`` accepts (when it is installed) and whose commands ``earful`` parses,
an environment file that loads, and proxies that match the port, the body limit and the
trusted proxies."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.cli import build_parser
from app.config import Settings, load_settings
from app.supervisor import STOP_GRACE
from tests.test_cli import EARFUL

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
UNITS = {"earful-web.service": "serve", "earful-worker.service": "worker", "earful-smtp.service": "smtp"}
INSTALLED_EARFUL = "/opt/earful/.venv/bin/earful"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment, method-assign]  # keys keep their case
    parser.read_string((DEPLOY / "systemd" / name).read_text())
    return parser


def environment() -> dict[str, str]:
    """The variables deploy/earful.env sets (comments left out)."""
    pairs = [line.split("=", 1) for line in (DEPLOY / "earful.env").read_text().splitlines()]
    return {
        key: value for key, value in (pair for pair in pairs if len(pair) == 2) if not key.startswith("#")
    }


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path):
    for name in UNITS:
        # verify wants the command to exist: this checkout's earful stands in for the installed one.
        text = (DEPLOY / "systemd" / name).read_text().replace(INSTALLED_EARFUL, str(EARFUL))
        (tmp_path / name).write_text(text)

    verified = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *(str(tmp_path / name) for name in UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert verified.returncode == 0, verified.stderr
    assert verified.stderr.strip() == "", verified.stderr  # unknown keys are only warned about


@pytest.mark.parametrize(("name", "command"), UNITS.items())
def test_each_unit_runs_its_earful_command_restarted_always_and_hardened(name, command):
    service = unit(name)["Service"]

    executable, *arguments = service["ExecStart"].split()
    assert executable == INSTALLED_EARFUL
    assert build_parser().parse_args(arguments).command == command
    assert service["Restart"] == "always"  # not on-failure: a master that exits 0 must come back
    assert service["EnvironmentFile"] == "/etc/earful/earful.env"
    assert service["ReadWritePaths"] == environment()["EARFUL_DATA_DIR"]
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
        "KillMode": "mixed",
        "UMask": "0077",
    }.items():
        assert service[key] == value, key


def test_the_web_unit_gives_the_graceful_stop_time_to_finish():
    service = unit("earful-web.service")["Service"]

    graceful = int(environment()["EARFUL_GRACEFUL_TIMEOUT"])
    assert int(service["TimeoutStopSec"]) > graceful + STOP_GRACE
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"


def test_the_environment_file_loads_and_trusts_the_local_proxy(tmp_path):
    settings = load_settings({**environment(), "EARFUL_DATA_DIR": str(tmp_path), "EARFUL_SECRET_KEY": "k"})

    assert settings.log_format == "json"
    assert settings.metrics_bind == ("127.0.0.1", 9100)
    assert {str(network) for network in settings.trusted_proxies} == {"127.0.0.1/32", "::1/128"}


def test_every_variable_of_the_environment_file_is_documented():
    readme = (DEPLOY.parent / "README.md").read_text()
    named = set(re.findall(r"^#?(EARFUL_[A-Z_]+)=", (DEPLOY / "earful.env").read_text(), re.M))

    assert named
    assert {name for name in named if f"`{name}`" not in readme} == set()


def _web_port() -> str:
    arguments = unit("earful-web.service")["Service"]["ExecStart"].split()
    return arguments[arguments.index("--port") + 1]


def test_caddy_proxies_to_the_web_unit_with_the_body_limit():
    caddyfile = (DEPLOY / "proxy" / "Caddyfile").read_text()
    limit = Settings.max_request_bytes // 1024 // 1024

    assert f"reverse_proxy 127.0.0.1:{_web_port()}" in caddyfile
    assert f"max_size {limit}MiB" in caddyfile
    assert "health_uri /readyz" in caddyfile
    assert caddyfile.count("{") == caddyfile.count("}")


def test_nginx_proxies_to_the_web_unit_with_the_body_limit_and_forwarded_for():
    config = (DEPLOY / "proxy" / "nginx.conf").read_text()
    limit = Settings.max_request_bytes // 1024 // 1024

    assert f"server 127.0.0.1:{_web_port()};" in config
    assert f"client_max_body_size {limit}m;" in config
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in config
    assert "ssl_certificate " in config
    assert config.count("{") == config.count("}")
    assert all(line.rstrip().endswith(("{", "}", ";")) for line in _statements(config))


def _statements(config: str) -> list[str]:
    """The lines of an nginx file that hold a statement (not blank, not a comment)."""
    return [line.split("#", 1)[0] for line in config.splitlines() if line.split("#", 1)[0].strip()]
