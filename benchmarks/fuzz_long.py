"""The long fuzz run: millions of mutated indexes, watched for exceptions, crashes and hangs.

Usage (from the project root; docs/RELIABILITY.md records the figures of the last run)::

    nice -n 10 .venv/bin/python benchmarks/fuzz_long.py --cases 1000000 --report fuzz-report.json
    nice -n 10 .venv/bin/python benchmarks/fuzz_long.py --exporters --cases 20000

``--exporters`` runs the export cases instead (``run_export_case``: llms.txt, the web bundle and
the PostgreSQL export into a throwaway server the parent starts, unless ``--no-postgres``).

Cases ``start .. start + cases - 1`` are run in a worker process; case ``i`` is fully determined
by ``RandomChooser(seed * 2**32 + i)``, so any finding replays with ``--start i --cases 1``.
The parent watches the worker:

* an exception other than :class:`scidx.errors.ScidxError` (including ``MemoryError`` under the
  address-space limit and any numpy ``RuntimeWarning``, turned into errors) is a *finding*,
  reported with its case number and traceback; the worker goes on;
* a worker killed by a signal (SIGSEGV, SIGBUS...) is a *crash* at the case it was running;
* a case that runs longer than ``--timeout`` seconds is a *hang*: the worker is killed;

after a crash or hang a new worker resumes at the next case. Exit status 0 means 0 findings,
0 crashes, 0 hangs.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"  # the harness lives beside the bounded suite test
_SLOT = struct.Struct("<q")  # the case the worker is running, -1 when idle


def worker(
    start: int, end: int, seed: int, slot_path: str, mem_limit: int, exporters: str | None
) -> None:
    """Run cases ``[start, end)``; print one JSON line per finding and a final summary line.

    ``exporters``: None for reader cases, else the export cases, with this PostgreSQL DSN
    (``""``: no PostgreSQL).
    """
    sys.path.insert(0, str(TESTS))
    if mem_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    warnings.simplefilter("error")  # a RuntimeWarning on stderr is a finding too
    from fuzz.harness import RandomChooser, run_case, run_export_case, seeds
    from scidx.errors import ScidxError

    seeds()
    workdir = Path(tempfile.mkdtemp(prefix="scidx-fuzz-export-"))

    def case(ch: RandomChooser) -> str:
        if exporters is None:
            return run_case(ch)
        return run_export_case(ch, workdir, exporters or None)

    fd = os.open(slot_path, os.O_RDWR)
    slot = mmap.mmap(fd, _SLOT.size)
    outcomes: Counter[str] = Counter()
    for i in range(start, end):
        _SLOT.pack_into(slot, 0, i)
        try:
            outcomes[case(RandomChooser(seed * 2**32 + i))] += 1
        except ScidxError:  # pragma: no cover - run_case handles these; defence in depth
            outcomes["refused"] += 1
        except BaseException as exc:  # noqa: BLE001 - every other exception is a finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcomes["finding"] += 1
            tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
            line = {
                "finding": i,
                "type": type(exc).__name__,
                "message": str(exc)[:500],
                "traceback": "".join(tb[-6:])[-3000:],
            }
            print(json.dumps(line), flush=True)
    _SLOT.pack_into(slot, 0, -1)
    print(json.dumps({"done": end, "outcomes": dict(outcomes)}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--mem-limit", type=int, default=4 << 30, help="worker RLIMIT_AS bytes")
    parser.add_argument("--batch", type=int, default=20_000, help="cases per worker process")
    parser.add_argument("--report", type=Path, default=None)
    parser.add_argument("--exporters", action="store_true", help="fuzz the exporters")
    parser.add_argument("--no-postgres", action="store_true", help="exporters: skip PostgreSQL")
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--slot", help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args.seed, args.slot, args.mem_limit, args.dsn)
        return 0
    server = None
    dsn: str | None = None
    if args.exporters:
        dsn = ""
        if not args.no_postgres:
            sys.path.insert(0, str(TESTS))
            from support.pg_server import PgServer

            server = PgServer().start()
            dsn = server.dsn
    try:
        return _run(args, dsn)
    finally:
        if server is not None:
            server.stop()


def _run(args: argparse.Namespace, dsn: str | None) -> int:

    started = time.time()
    outcomes: Counter[str] = Counter()
    findings: list[dict[str, Any]] = []
    crashes: list[dict[str, Any]] = []
    hangs: list[int] = []
    end = args.start + args.cases
    pos = args.start
    with tempfile.NamedTemporaryFile(prefix="scidx-fuzz-slot-") as slot_file:
        slot_file.write(_SLOT.pack(-1))
        slot_file.flush()
        os.fsync(slot_file.fileno())
        while pos < end:
            stop = min(pos + args.batch, end)
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                str(pos),
                str(stop),
                "--seed",
                str(args.seed),
                "--slot",
                slot_file.name,
                "--mem-limit",
                str(args.mem_limit),
                *(["--dsn", dsn] if dsn is not None else []),
            ]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
            assert proc.stdout is not None
            out_fd = proc.stdout.fileno()
            os.set_blocking(out_fd, False)
            buffered = ""
            last_case, last_change = -2, time.monotonic()
            resume = stop
            while True:
                try:
                    while block := os.read(out_fd, 1 << 16):
                        buffered += block.decode()
                except BlockingIOError:
                    pass
                *lines, buffered = buffered.split("\n")
                for line in lines:
                    msg = json.loads(line)
                    if "finding" in msg:
                        findings.append(msg)
                        print(
                            f"finding at case {msg['finding']}: {msg['type']}: "
                            f"{msg['message'][:200]}",
                            file=sys.stderr,
                            flush=True,
                        )
                    elif "done" in msg:
                        outcomes.update(msg["outcomes"])
                code = proc.poll()
                slot_file.seek(0)
                (current,) = _SLOT.unpack(os.pread(slot_file.fileno(), _SLOT.size, 0))
                if code is not None:
                    if code != 0:
                        crashes.append({"case": current, "exit": code})
                        print(f"crash at case {current}: exit {code}", file=sys.stderr)
                        resume = current + 1 if current >= pos else stop
                        outcomes["crash"] += 1
                        outcomes["done-before-crash"] += max(current - pos, 0)
                    break
                now = time.monotonic()
                if current != last_case:
                    last_case, last_change = current, now
                elif current >= 0 and now - last_change > args.timeout:
                    proc.kill()
                    proc.wait()
                    hangs.append(current)
                    print(f"hang at case {current} (> {args.timeout}s)", file=sys.stderr)
                    outcomes["hang"] += 1
                    outcomes["done-before-hang"] += max(current - pos, 0)
                    resume = current + 1
                    break
                time.sleep(0.05)
            pos = resume
            done = pos - args.start
            rate = done / max(time.time() - started, 1e-9)
            print(
                f"{done}/{args.cases} cases, {rate:.0f}/s, findings {len(findings)}, "
                f"crashes {len(crashes)}, hangs {len(hangs)}",
                file=sys.stderr,
                flush=True,
            )
    elapsed = time.time() - started
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "cases": args.cases,
        "start": args.start,
        "seed": args.seed,
        "exporters": args.exporters,
        "postgres": bool(dsn),
        "outcomes": dict(outcomes),
        "findings": findings,
        "crashes": crashes,
        "hangs": hangs,
        "seconds": round(elapsed, 1),
        "casesPerSecond": round(args.cases / max(elapsed, 1e-9), 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": _git_head(),
    }
    text = json.dumps(report, indent=1)
    if args.report:
        args.report.write_text(text + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "findings"}, indent=1))
    return 0 if not findings and not crashes and not hangs else 1


def _git_head() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


if __name__ == "__main__":
    sys.exit(main())
