"""What observing a request costs: ``python -m benchmarks.overhead`` prints microseconds per call.

- the metrics of a request (app.metrics.observe_request: a counter and a histogram), in
  prometheus-client's multiprocess mode as ``earful serve`` runs it (a folder of mmap'ed files)
  and in memory;
- a capture submit's counter;
- the request's log line (app/observation.py's call, app/logs.py's JSON and text formatters,
  written to /dev/null through the handler ``earful serve`` installs), and the same call when
  the line is turned off (EARFUL_ACCESS_LOG=0: nothing is built).

Each figure is the best of five runs of ``CALLS`` calls, in a fresh interpreter per mode (the
multiprocess mode is chosen when prometheus-client is imported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import timeit

CALLS = 100_000
FIELDS = {
    "method": "POST",
    "route": "/applications/<application_id>/submit",
    "status": 201,
    "duration_ms": 1.23,
    "client": "203.0.113.9",
}


def best(statement: object, number: int = CALLS) -> float:
    """Microseconds per call, best of five."""
    return min(timeit.repeat(statement, number=number, repeat=5)) / number * 1e6  # type: ignore[arg-type]


def measure_metrics() -> dict[str, float]:
    from app.metrics import capture_submitted, observe_request

    return {
        "observe_request": best(
            lambda: observe_request("/applications/<application_id>/submit", "POST", 201, 0.0012)
        ),
        "capture_submitted": best(lambda: capture_submitted("stored")),
    }


def measure_logs() -> dict[str, float]:
    import logging

    from app.logs import configure_logging, current_id

    results = {}
    current_id.set("6f1c0a4e9b2d4c55a1e2b3c4d5e6f708")
    logger = logging.getLogger("earful.access")
    with open(os.devnull, "w") as sink:
        for log_format in ("json", "text"):
            configure_logging(log_format)
            handler = logging.getLogger().handlers[0]
            assert isinstance(handler, logging.StreamHandler)
            handler.setStream(sink)
            results[f"log line ({log_format})"] = best(
                lambda: logger.info(
                    "%s %s %d", "POST", "/applications/<application_id>/submit", 201, extra=FIELDS
                ),
                20_000,
            )
        logging.getLogger().setLevel(logging.WARNING)
        results["log line (off: below the level)"] = best(lambda: logger.info("x %s", 1, extra=FIELDS))
    return results


def child(mode: str) -> None:
    measured = measure_logs() if mode == "logs" else measure_metrics()
    print(json.dumps(measured))


def run(mode: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.overhead", mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    base = {key: value for key, value in os.environ.items() if key != "PROMETHEUS_MULTIPROC_DIR"}
    with tempfile.TemporaryDirectory() as folder:
        multiprocess = run("metrics", {**base, "PROMETHEUS_MULTIPROC_DIR": folder})
    memory = run("metrics", base)
    logs = run("logs", base)
    for name, value in multiprocess.items():
        print(f"{name + ' (multiprocess)':40} {value:7.2f} µs")
    for name, value in memory.items():
        print(f"{name + ' (in memory)':40} {value:7.2f} µs")
    for name, value in logs.items():
        print(f"{name:40} {value:7.2f} µs")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        child(sys.argv[1])
    else:
        main()
