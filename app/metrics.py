"""Prometheus metrics, with prometheus-client in its multiprocess mode under ``earful serve``.

The master of ``earful serve`` empties a folder of the data dir (``metrics/``) and names it in
``PROMETHEUS_MULTIPROC_DIR`` before it starts the workers (:func:`prepare_multiprocess_dir`):
each worker writes its counters to files of its own there, and a scrape, answered by any
worker, adds up every file with a fresh registry (stack notes 2, §16). Counters of a replaced
worker stay counted until the next start of ``earful serve``. Without the variable (tests,
``earful worker``) the metrics live in the process's memory.

The queues' depth and age are not kept here: they are read from the database when scraped
(app.services.monitoring), so every host reports the same, whoever sent what.
No label carries a path, an address or anything a client chose: routes are the URL rules.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from app.private_files import make_private_dir

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
UNMATCHED = "unmatched"  # the route of a request no rule matched (404, 405)

REQUESTS = Counter(
    "earful_http_requests",
    "HTTP requests answered, by route (the URL rule), method and status.",
    ("route", "method", "status"),
)
REQUEST_SECONDS = Histogram(
    "earful_http_request_duration_seconds",
    "Seconds from a request's arrival to its answer's headers, by route and method.",
    ("route", "method"),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
CAPTURE_SUBMITS = Counter(
    "earful_capture_submits",
    "Capture API submits, by outcome: stored, discarded (a bot's or a blocked sender's, answered "
    "as if stored) or refused (answered with an error).",
    ("outcome",),
)
DELIVERY_FAILURES = Counter(
    "earful_delivery_failures",
    "Failed delivery attempts, by queue: email (the outbox) or webhook.",
    ("queue",),
)

_submits = {outcome: CAPTURE_SUBMITS.labels(outcome) for outcome in ("stored", "discarded", "refused")}
_failures = {queue: DELIVERY_FAILURES.labels(queue) for queue in ("email", "webhook")}
_observed: dict[tuple[str, str, str], tuple[Counter, Histogram]] = {}


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request and its duration (the labelled children are kept, so the
    hot path is two increments)."""
    key = (route, method, str(status))
    children = _observed.get(key)
    if children is None:
        children = _observed[key] = (REQUESTS.labels(*key), REQUEST_SECONDS.labels(route, method))
    children[0].inc()
    children[1].observe(seconds)


def capture_submitted(outcome: str) -> None:
    """Count a capture submit: ``stored``, ``discarded`` or ``refused``."""
    _submits[outcome].inc()


def delivery_failed(queue: str) -> None:
    """Count a failed delivery attempt of ``email`` or ``webhook``."""
    _failures[queue].inc()


def prepare_multiprocess_dir(path: Path) -> None:
    """Empty ``path`` and name it to the processes started from now on (the master of ``earful
    serve`` calls this before it starts workers): counts of earlier runs and dead processes go."""
    shutil.rmtree(path, ignore_errors=True)
    make_private_dir(path)
    os.environ[MULTIPROCESS_VARIABLE] = str(path)


def process_stopped() -> None:
    """Tell the multiprocess files that this process is gone (its live gauges stop counting)."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]  # untyped upstream


class QueueGauges(Collector):
    """The durable queues as read at the scrape: ``(queue, pending, sending, oldest seconds)``."""

    def __init__(self, queues: Sequence[tuple[str, int, int, float]]) -> None:
        self.queues = queues

    def collect(self) -> Iterable[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "earful_queue_depth",
            "Rows waiting in a durable queue (email: the outbox; webhook: the deliveries), by state: "
            "pending (to send) or sending (claimed by a worker).",
            labels=("queue", "status"),
        )
        age = GaugeMetricFamily(
            "earful_queue_oldest_age_seconds",
            "Seconds since the oldest waiting row of a queue was queued (0 when it is empty).",
            labels=("queue",),
        )
        for name, pending, sending, oldest in self.queues:
            depth.add_metric((name, "pending"), pending)
            depth.add_metric((name, "sending"), sending)
            age.add_metric((name,), oldest)
        return [depth, age]


def exposition(queues: Sequence[tuple[str, int, int, float]]) -> bytes:
    """The text a scrape reads: every process's metrics (a fresh registry over the multiprocess
    files, else this process's own) and the queues' gauges."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # untyped upstream
        counted = generate_latest(registry)
    else:
        counted = generate_latest(REGISTRY)
    gauges = CollectorRegistry(auto_describe=False)
    gauges.register(QueueGauges(queues))
    return counted + generate_latest(gauges)
