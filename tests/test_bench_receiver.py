"""The bench's webhook receiver counts what it is sent, and a drain waits for deliveries still
on their way, so that a writing scenario's CPU per request counts the deliveries it caused."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from benchmarks.load import Deliveries
from benchmarks.servers import start_receiver, stop


@pytest.fixture
def receiver(tmp_path) -> Iterator[str]:
    process, base = start_receiver(tmp_path)
    try:
        yield base
    finally:
        stop(process)


def test_the_receiver_answers_every_post_with_204_on_one_connection(receiver):
    with httpx.Client(base_url=receiver) as client:
        answers = [client.post("/hooks/earful", content=b'{"type":"feedback.created"}') for _ in range(3)]

    assert [answer.status_code for answer in answers] == [204, 204, 204]
    assert Deliveries(receiver).count() == 3


def test_a_drain_waits_for_the_deliveries_still_arriving(receiver):
    deliveries = Deliveries(receiver)

    def late_deliveries() -> None:
        with httpx.Client(base_url=receiver) as client:
            for _ in range(4):
                time.sleep(0.2)
                client.post("/hooks/earful", content=b"{}")

    sender = threading.Thread(target=late_deliveries)
    sender.start()
    delivered, seconds = deliveries.drain(quiet=0.5)
    sender.join()

    assert delivered == 4
    assert 0.6 <= seconds < 2.0
    assert deliveries.drain(quiet=0.1) == (0, 0.0)
