"""The master process of ``earful serve``: it keeps N web workers running.

Hypercorn's own ``run`` stops the whole server, with status 0 and no log line, as soon as any one
worker dies (stack notes 2, §16): one worker killed by the OOM killer took the service down. This
supervisor replaces Hypercorn's master and keeps its worker:

- The master binds the sockets once and spawns the workers (multiprocessing ``spawn``, as
  Hypercorn does); each runs Hypercorn's uvloop worker on the shared sockets. While a worker is
  down the sockets stay open in the master, so new connections wait in the backlog for the
  others instead of being refused.
- A worker that exits while the master is not stopping (killed by a signal, crashed, or stopped
  on its own with SIGTERM) is logged with its pid and how it ended, and replaced at once.
- It gives up when it cannot recover: after ``CRASH_LIMIT`` unexpected exits within
  ``CRASH_WINDOW`` seconds (workers that die right after they start, again and again), it stops
  the other workers and exits with status 1, so that a process manager sees the failure.
- SIGTERM or SIGINT: every worker gets SIGTERM, which Hypercorn's worker takes as a graceful
  stop (requests in flight get ``graceful_timeout`` to finish, then the background workers
  stop and hand back the outbox and webhook rows they hold); a worker still running
  ``STOP_GRACE`` seconds later is killed. Exit status 0.
- SIGHUP reloads: a new set of workers is started, then the old ones are stopped gracefully.
- Workers stop when the master dies (Linux ``PR_SET_PDEATHSIG``), so that a master killed with
  SIGKILL leaves no orphan holding the port when a process manager starts Earful again.

``--workers 1`` is supervised the same way: one worker process beside the master.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess

from hypercorn.config import Config, Sockets

CRASH_LIMIT = 5
CRASH_WINDOW = 60.0
# Seconds beyond the config's graceful_timeout before stragglers are killed: the background
# workers stop after the requests (up to app.workers.STOP_TIMEOUT each) and hand back their leases.
STOP_GRACE = 20.0
_PR_SET_PDEATHSIG = 1

log = logging.getLogger("earful.serve")


def serve_worker(config: Config, sockets: Sockets, master_pid: int) -> None:
    """The body of a worker process: Hypercorn's uvloop worker on the master's sockets.

    Without a shutdown event, Hypercorn's worker installs its own SIGTERM and SIGINT handlers and
    stops gracefully on either, which is how the master (or anyone) stops one worker.
    """
    from hypercorn.asyncio.run import uvloop_worker

    _stop_with(master_pid)
    uvloop_worker(config, sockets)


def _stop_with(master_pid: int) -> None:
    """Ask the kernel for a SIGTERM when the master dies; stop now if it died already."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != master_pid:
        sys.exit(0)


def describe_exit(exitcode: int) -> str:
    """How a process ended, for the log: 'exited with status 1', 'was killed by signal 9 (SIGKILL)'."""
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "unknown"
        return f"was killed by signal {-exitcode} ({name})"
    return f"exited with status {exitcode}"


@dataclass
class _Worker:
    process: BaseProcess
    pid: int  # kept here: a closed Process no longer tells it
    retiring: bool = False  # asked to stop by the master: its exit is expected


class _SignalPipe:
    """Signals received by the master, read by its main loop.

    The handlers do nothing themselves: Python's C-level handler writes the signal number to the
    wake-up pipe, which wakes the loop's ``wait`` beside the workers' sentinels. Nothing runs
    inside a signal handler, so the loop never races with itself.
    """

    def __init__(self, signums: tuple[signal.Signals, ...]) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous_fd = signal.set_wakeup_fd(self._write)
        self._previous = {signum: signal.signal(signum, _wake) for signum in signums}

    def fileno(self) -> int:
        return self._read

    def received(self) -> list[signal.Signals]:
        try:
            data = os.read(self._read, 512)
        except BlockingIOError:
            return []
        return [signal.Signals(number) for number in data if number in self._previous]

    def close(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._read)
        os.close(self._write)


def _wake(signum: int, frame: object) -> None:
    """Installed so that the signal reaches the wake-up pipe; the main loop acts on it."""


class Supervisor:
    """Runs ``workers`` Hypercorn workers of ``config`` and keeps them running (see the module)."""

    def __init__(self, config: Config, workers: int) -> None:
        self._config = config
        self._size = workers
        self._context = get_context("spawn")
        self._workers: list[_Worker] = []
        self._deaths: deque[float] = deque()
        self._sockets: Sockets | None = None

    def run(self) -> int:
        """Serve until SIGTERM or SIGINT (status 0), or until the workers cannot be kept up (1)."""
        self._sockets = self._config.create_sockets()
        signals = _SignalPipe((signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
        try:
            for _ in range(self._size):
                self._start()
            while True:
                wait([*(worker.process.sentinel for worker in self._workers), signals.fileno()])
                for signum in signals.received():
                    if signum == signal.SIGHUP:
                        self._reload()
                    else:
                        log.info("%s received: stopping the workers", signum.name)
                        self._stop()
                        return 0
                if not self._replace_exited():
                    self._stop()
                    return 1
        finally:
            signals.close()
            for sock in (*self._sockets.secure_sockets, *self._sockets.insecure_sockets):
                sock.close()

    def _start(self) -> None:
        process = self._context.Process(
            target=serve_worker,
            args=(self._config, self._sockets, os.getpid()),
            name="earful-worker",
        )
        # The worker inherits an ignored SIGINT until its own handler is in place, so a Ctrl+C
        # while it boots is left to the master (as Hypercorn does).
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            process.start()
        finally:
            signal.signal(signal.SIGINT, previous)
        self._workers.append(_Worker(process, process.pid or 0))
        log.info("started worker %d", process.pid)

    def _exited(self) -> list[_Worker]:
        """Remove and return the workers that have ended."""
        ended = [worker for worker in self._workers if worker.process.exitcode is not None]
        for worker in ended:
            self._workers.remove(worker)
            worker.process.join()
        return ended

    def _replace_exited(self) -> bool:
        """Replace the workers that died unexpectedly; False when they die too often to go on."""
        for worker in self._exited():
            exitcode = worker.process.exitcode or 0
            worker.process.close()
            if worker.retiring:
                log.info("worker %d %s after the reload", worker.pid, describe_exit(exitcode))
                continue
            now = time.monotonic()
            self._deaths.append(now)
            while self._deaths[0] < now - CRASH_WINDOW:
                self._deaths.popleft()
            if len(self._deaths) >= CRASH_LIMIT:
                log.error(
                    "worker %d %s; workers died %d times within %d s; giving up",
                    worker.pid,
                    describe_exit(exitcode),
                    len(self._deaths),
                    CRASH_WINDOW,
                )
                return False
            log.error("worker %d %s; starting a replacement", worker.pid, describe_exit(exitcode))
            self._start()
        return True

    def _reload(self) -> None:
        old = [worker for worker in self._workers if not worker.retiring]
        log.info("reloading: starting %d new workers, then stopping the old ones", self._size)
        for worker in old:
            worker.retiring = True
        for _ in range(self._size):
            self._start()
        for worker in old:
            worker.process.terminate()

    def _stop(self) -> None:
        """Stop every worker gracefully; kill those still running after the grace period."""
        for worker in self._workers:
            worker.retiring = True
            worker.process.terminate()
        deadline = time.monotonic() + self._config.graceful_timeout + STOP_GRACE
        while self._workers and time.monotonic() < deadline:
            wait([worker.process.sentinel for worker in self._workers], deadline - time.monotonic())
            for worker in self._exited():
                worker.process.close()
        for worker in self._workers:
            log.warning("worker %d did not stop within the grace period: killing it", worker.pid)
            worker.process.kill()
            worker.process.join()
            worker.process.close()
        self._workers.clear()
        log.info("all workers stopped")
