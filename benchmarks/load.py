"""Driving a server with wrk: the scenarios, their measures, and the CPU its workers spent.

Every run is bounded by its duration and goes to 127.0.0.1 only. Requests/s moves with the
shared machine; the workers' CPU time per request (read from /proc) moves far less.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "benchmarks" / "lua"
HOST = "127.0.0.1"
DURATION = os.environ.get("BENCH_DURATION", "10s")
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "32"))
WRK_THREADS = int(os.environ.get("BENCH_WRK_THREADS", "2"))
PAIRS = int(os.environ.get("BENCH_PAIRS", "3"))
LOW_CONNECTIONS = int(os.environ.get("BENCH_LOW_CONNECTIONS", "4"))


@dataclass
class Scenario:
    name: str
    path: str
    script: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    connections: int = CONNECTIONS
    # A load run at the same time (mixed scenarios): the connections are shared half and half.
    beside: Scenario | None = None


@dataclass
class Measure:
    scenario: str
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int  # non-2xx/3xx responses plus socket errors
    cpu_ms: float = float("nan")  # CPU time of the serving workers per request
    # CPU time of the local PostgreSQL server's processes per request (its own work for the
    # requests, which the workers' figure leaves out); on SQLite that work is the workers'.
    database_cpu_ms: float = float("nan")
    beside: Measure | None = None  # the load run at the same time, if any
    low: Measure | None = None  # the same scenario at LOW_CONNECTIONS: latency when not busy
    deliveries: int = 0  # webhook deliveries the receiver got while and after the load ran
    drain_s: float = 0.0  # how long after the load's end the last of them came


class Deliveries:
    """The bench's webhook receiver (benchmarks/receiver.py), counted from here.

    Earful delivers after the commit, so a writing scenario leaves deliveries behind when its
    load ends; :meth:`drain` waits for them, so that their work is counted in that scenario's
    CPU per request and not in the next scenario's (nor in the reference's run in turns)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen = self.count()

    def count(self) -> int:
        with urllib.request.urlopen(f"{self.url}/count", timeout=5) as answer:
            return int(answer.read())

    def drain(self, quiet: float = 0.5, limit: float = 120.0) -> tuple[int, float]:
        """Wait until no delivery has come for ``quiet`` seconds (``limit`` at most): the
        deliveries since the last drain, and the seconds until the last of them came."""
        started = last_change = time.monotonic()
        count = self.count()
        while time.monotonic() - last_change < quiet and time.monotonic() - started < limit:
            time.sleep(0.05)
            now = self.count()
            if now != count:
                count, last_change = now, time.monotonic()
        delivered, self.seen = count - self.seen, count
        return delivered, (last_change - started) if delivered else 0.0


_deliveries: Deliveries | None = None


def count_deliveries(receiver: Deliveries | None) -> None:
    """Drain and count the receiver's deliveries after every measured load (None: no receiver)."""
    global _deliveries
    _deliveries = receiver


def drained(result: Measure) -> None:
    """Wait for the deliveries the load left behind and note them on its measure."""
    if _deliveries is not None:
        result.deliveries, result.drain_s = _deliveries.drain()


def _cpu_seconds(stat: Path, name: str | None = None) -> float:
    """User + system CPU time of one process from its /proc stat file (0 if it is gone, or is
    not named ``name``)."""
    try:
        text = stat.read_text()
    except OSError:
        return 0.0
    command, _, rest = text.partition(" (")[2].rpartition(") ")
    if name is not None and command != name:
        return 0.0
    fields = rest.split()  # from the state on: utime and stime are the 12th and 13th
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workers_cpu_seconds(process: subprocess.Popen) -> float:
    """User + system CPU time used so far by the worker processes of a server."""
    pids = subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    return sum(_cpu_seconds(Path(f"/proc/{pid}/stat")) for pid in pids)


def database_cpu_seconds() -> dict[int, float]:
    """User + system CPU time used so far by each process of a PostgreSQL server on this
    machine (the bench's database runs on 127.0.0.1), by process id: see
    :func:`database_cpu_since`."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        seconds = _cpu_seconds(stat, "postgres")
        if seconds:
            found[int(stat.parent.name)] = seconds
    return found


def database_cpu_since(before: dict[int, float]) -> float:
    """The PostgreSQL server's CPU seconds since ``before``, process by process: a process that
    started meanwhile counts from zero, one that ended meanwhile (an autovacuum worker) is left
    out with the time it spent (a sum over the processes would count it negatively)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in database_cpu_seconds().items())


def measure(name: str, url: str, scenario: Scenario, server: subprocess.Popen) -> Measure:
    """wrk one scenario, and the workers' CPU time per request while it ran (steadier than
    requests/s on a shared machine). A mixed scenario's load beside it starts a second before
    and ends a second after it; its CPU time is then not told apart."""
    if scenario.beside is not None:
        return measure_beside(name, url, scenario, scenario.beside)
    before, database_before = workers_cpu_seconds(server), database_cpu_seconds()
    result = wrk(name, url, scenario)
    drained(result)
    if result.requests:
        result.cpu_ms = (workers_cpu_seconds(server) - before) * 1000 / result.requests
        result.database_cpu_ms = database_cpu_since(database_before) * 1000 / result.requests
    return result


def measure_beside(name: str, url: str, scenario: Scenario, beside: Scenario) -> Measure:
    """``scenario`` while ``beside`` loads the same server, each on half the connections."""
    half = max(1, CONNECTIONS // 2)
    seconds = _milliseconds(DURATION) / 1000
    with ThreadPoolExecutor(1) as pool:
        load = pool.submit(wrk, beside.name, url, replace(beside, connections=half), f"{seconds + 2:g}s")
        time.sleep(1)
        result = wrk(name, url, replace(scenario, beside=None, connections=half))
        result.beside = load.result()
    drained(result)
    return result


def measure_low(url: str, scenario: Scenario, server: subprocess.Popen) -> Measure:
    """The scenario at LOW_CONNECTIONS: its latency when the server is not saturated."""
    return measure(scenario.name, url, replace(scenario, connections=LOW_CONNECTIONS), server)


def report(result: Measure, note: str = "") -> None:
    print(
        f"{result.scenario:24} {result.requests_per_second:9.1f} req/s  "
        f"p50 {result.p50_ms:7.2f} ms  p99 {result.p99_ms:7.2f} ms  "
        f"cpu {result.cpu_ms:6.2f} ms/req  database {result.database_cpu_ms:6.2f} ms/req  "
        f"errors {result.errors}  {note}".rstrip(),
        flush=True,
    )


def _milliseconds(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def wrk(name: str, url: str, scenario: Scenario, duration: str = DURATION) -> Measure:
    args = ["wrk", f"-t{WRK_THREADS}", f"-c{scenario.connections}", f"-d{duration}", "--latency", "--timeout"]
    args.append("10s")
    for key, value in scenario.headers.items():
        args += ["-H", f"{key}: {value}"]
    if scenario.script:
        args += ["-s", str(LUA / scenario.script)]
    args.append(url + scenario.path)
    env = {**os.environ, **scenario.env}
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, check=False).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    total = re.search(r"(\d+) requests in", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    if socket_errors:
        errors += sum(int(group) for group in socket_errors.groups())
    if not rps:
        print(out, file=sys.stderr)
    return Measure(
        scenario=name,
        requests_per_second=float(rps.group(1)) if rps else 0.0,
        p50_ms=_milliseconds(p50.group(1)) if p50 else float("nan"),
        p99_ms=_milliseconds(p99.group(1)) if p99 else float("nan"),
        requests=int(total.group(1)) if total else 0,
        errors=errors,
    )


def median_run(runs: list[Measure]) -> Measure:
    """The run with the median throughput, reported whole (its own p50 and p99)."""
    return sorted(runs, key=lambda run: run.requests_per_second)[len(runs) // 2]


def round_order(number: int, first: str, second: str) -> tuple[str, str]:
    """The two sides of a comparison in round ``number`` (from 1): ``first`` first in odd rounds,
    swapped in even ones, so that the machine's drift within a round falls on both sides alike
    (``make bench-ab``'s versions, ``make bench``'s smallest and largest sizes)."""
    return (first, second) if number % 2 else (second, first)


def measure_in_turns(
    base: str,
    scenario: Scenario,
    server: subprocess.Popen,
    reference_base: str,
    reference_scenario: Scenario,
    reference: subprocess.Popen,
) -> tuple[Measure, Measure, list[float]]:
    """One of Earful's scenarios and its counterpart in the reference app in turns, PAIRS times each.

    The machine is shared and its speed drifts by a third within an hour, so a reference measured
    minutes away from the submit gave ratios from 0.69 to 0.94 on the same code. Taken in turns,
    each ratio compares two runs seconds apart; the median run of each is reported.
    """
    ours, theirs, ratios = [], [], []
    for _ in range(PAIRS):
        theirs.append(measure(reference_scenario.name, reference_base, reference_scenario, reference))
        ours.append(measure(scenario.name, base, scenario, server))
        if theirs[-1].requests_per_second:
            ratios.append(ours[-1].requests_per_second / theirs[-1].requests_per_second)
    return median_run(ours), median_run(theirs), ratios
