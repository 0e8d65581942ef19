"""``/healthz``, ``/readyz`` and ``/metrics``: what load balancers and Prometheus call."""

from __future__ import annotations

from typing import Any

from app.openapi.responses import text

Operation = dict[str, Any]


def operations_paths() -> dict[str, dict[str, Operation]]:
    return {
        "/healthz": {
            "get": {
                "operationId": "getHealth",
                "summary": "The process answers",
                "description": "Alive: asks no dependency, so a database outage never makes a "
                "process manager or an orchestrator restart a healthy server.",
                "tags": ["Operations"],
                "security": [],
                "responses": {200: text("Alive.", "ok")},
            }
        },
        "/readyz": {
            "get": {
                "operationId": "getReadiness",
                "summary": "The server can serve",
                "description": "Ready: the database answers and has every migration of this "
                "version, and Redis answers when `EARFUL_REDIS_URL` is set. Each check is bounded "
                "by a 2-second timeout, so a dependency that hangs gives a quick 503.",
                "tags": ["Operations"],
                "security": [],
                "responses": {
                    200: text("Ready.", "ok"),
                    503: text(
                        "Not ready: one line per failed check, its name first.",
                        examples=(
                            "database: ConnectionRefusedError",
                            "migrations: 1 pending (0015_webhooks_notifications_receipts); "
                            "run earful db upgrade",
                            "redis: no answer within 2 s",
                        ),
                    ),
                },
            }
        },
        "/metrics": {
            "get": {
                "operationId": "getMetrics",
                "summary": "Prometheus metrics",
                "description": "Every worker's counters added up: requests by route and status, "
                "their latency, capture submits, failed deliveries, and the e-mail and webhook "
                "queues' depth and oldest age. Needs `EARFUL_METRICS_TOKEN` as a bearer token; "
                "on the `EARFUL_METRICS_BIND` listener, no token.",
                "tags": ["Operations"],
                "security": [{"metricsToken": []}],
                "responses": {
                    200: {
                        "description": "Prometheus's text exposition format.",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    401: text("No token, or a wrong one.", "Unauthenticated"),
                    404: text("No EARFUL_METRICS_TOKEN is set.", "Not Found"),
                },
            }
        },
    }
