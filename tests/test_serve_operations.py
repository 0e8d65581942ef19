"""A live ``earful serve --workers 2`` as operators run it: JSON logs from every process, metrics
added up across the workers, the metrics listener, readiness, and a clean stop."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.test_cli import EARFUL, Earful, free_port

START_TIMEOUT = 90.0  # two workers on a busy 2-core machine
TOKEN = "metrics-test-token"
REQUESTS = 24


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    stderr: Path
    data_dir: Path
    url: str
    metrics_url: str

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stderr.read_text().splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("ops") / "data"
    stale = data_dir / "metrics" / "counter_4242.db"  # a dead process's counts from an earlier run
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale")
    port, metrics_port = free_port(), free_port()
    env = {
        **Earful(data_dir).env,
        "EARFUL_LOG_FORMAT": "json",
        "EARFUL_METRICS_TOKEN": TOKEN,
        "EARFUL_METRICS_BIND": f"127.0.0.1:{metrics_port}",
    }
    stderr = data_dir.parent / "stderr.log"
    with stderr.open("wb") as log:
        process = subprocess.Popen(
            [str(EARFUL), "serve", "--port", str(port), "--workers", "2"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    serving = Served(
        process, stderr, data_dir, f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while sum("Running on" in line.get("message", "") for line in serving.lines()) < 4:
            assert process.poll() is None, serving.stderr.read_text()
            assert time.monotonic() < deadline, serving.stderr.read_text()
            time.sleep(0.2)
        yield serving
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_metrics_add_up_the_requests_of_both_workers(served):
    answers = [httpx.get(f"{served.url}/app/login", timeout=10) for _ in range(REQUESTS)]
    assert all(answer.status_code == 200 for answer in answers)

    counted = 'earful_http_requests_total{method="GET",route="/app/login",status="200"}'
    for _ in range(4):  # any worker answers a scrape, and each sees every worker's counts
        scraped = httpx.get(f"{served.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert scraped.status_code == 200
        [line] = [line for line in scraped.text.splitlines() if line.startswith(counted)]
        assert float(line.split()[-1]) == REQUESTS
    files = sorted(path.name for path in (served.data_dir / "metrics").iterdir())
    assert "counter_4242.db" not in files  # the master emptied the folder before the workers started
    assert len([name for name in files if name.startswith("counter_")]) == 2


def test_the_metrics_listener_needs_no_token_and_serves_nothing_else(served):
    assert httpx.get(f"{served.metrics_url}/metrics", timeout=10).status_code == 200
    assert httpx.get(f"{served.metrics_url}/readyz", timeout=10).text == "ok"
    assert httpx.get(f"{served.metrics_url}/app/login", timeout=10).status_code == 404
    assert httpx.get(f"{served.url}/metrics", timeout=10).status_code == 401


def test_every_process_logs_json_and_each_request_with_the_id_it_answered(served):
    answer = httpx.get(f"{served.url}/app/login", timeout=10)

    lines = served.lines()
    [line] = [line for line in lines if line.get("request_id") == answer.headers["X-Request-ID"]]
    assert (line["logger"], line["route"], line["status"]) == ("earful.access", "/app/login", 200)
    assert len({line["process"] for line in lines}) == 3  # the master and both workers
    assert any(line["logger"] == "earful.serve" for line in lines)


def test_sigterm_stops_every_worker_and_exits_zero(served):
    served.process.send_signal(signal.SIGTERM)

    assert served.process.wait(timeout=60) == 0
    assert any(line.get("message") == "all workers stopped" for line in served.lines())


def test_the_metrics_listener_needs_a_port_of_its_own(tmp_path):
    env = {**Earful(tmp_path / "data").env, "EARFUL_METRICS_BIND": "127.0.0.1:8765"}

    refused = subprocess.run(
        [str(EARFUL), "serve", "--port", "8765"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert refused.returncode == 1
    assert "EARFUL_METRICS_BIND needs another port than --port 8765" in refused.stderr
