"""``toolup-rag serve`` as a real child process, for the tests that run it as a user would."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

__all__ = ["Served"]


class Served:
    """A running ``python -m scidx serve`` process, its URL and its stderr lines."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scidx", "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.stderr: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._pumps = [
            threading.Thread(target=self._pump, args=(self.proc.stderr, True), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stdout, False), daemon=True),
        ]
        for pump in self._pumps:
            pump.start()
        try:
            self.first_line = self._lines.get(timeout=60)
        except queue.Empty:
            self.stop()
            raise AssertionError("no URL printed; stderr:\n" + "".join(self.stderr)) from None
        self.url = self.first_line.rsplit(" on ", 1)[1].strip()

    def _pump(self, stream: object, is_err: bool) -> None:
        for line in stream:  # type: ignore[attr-defined]
            if is_err:
                self.stderr.append(line)
            else:
                self._lines.put(line)

    def wait_for_log(self, text: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.stderr):
            assert time.monotonic() < deadline, f"{text!r} not logged:\n" + "".join(self.stderr)
            time.sleep(0.05)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pump in self._pumps:
            pump.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return self.proc.returncode
