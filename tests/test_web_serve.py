"""``toolup-rag serve`` as a user runs it: a real process, its printed URL, reloads, exit codes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette", reason="toolup-rag serve needs the serve extra")
pytest.importorskip("uvicorn", reason="toolup-rag serve needs the serve extra")

from scidx.pack.packer import pack_records  # noqa: E402
from support.served import Served  # noqa: E402
from support.web_server import OTHER, RECORDS, URL_TEMPLATE  # noqa: E402


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("serve")
    out = {}
    for name, records in (("docs", RECORDS), ("faq", OTHER)):
        pack_records(records, folder / f"{name}.scidx", url_template=URL_TEMPLATE, use_cache=False)
        out[name] = (folder / f"{name}.scidx").read_bytes()
    return out


@pytest.fixture
def live(tmp_path: Path, packs: dict[str, bytes]) -> Iterator[tuple[Path, Served]]:
    path = tmp_path / "live.scidx"
    path.write_bytes(packs["docs"])
    served = Served(f"site={path}", "--port", "0", "--reload-interval", "0.05")
    try:
        yield path, served
    finally:
        served.stop()


def replace(path: Path, data: bytes) -> None:
    staged = path.with_name(path.name + ".tmp")
    staged.write_bytes(data)
    os.replace(staged, path)  # an atomic rename, as pack-docs writes


def chunks(client: httpx.Client) -> int:
    health = client.get("/healthz").json()
    return int(health["indexes"][0]["chunks"])


def test_serve_prints_the_url_and_answers(live: tuple[Path, Served]) -> None:
    _, served = live
    assert served.first_line.startswith("serving site (5 chunks) on http://127.0.0.1:")
    assert served.url.endswith("/")
    with httpx.Client(base_url=served.url, timeout=10) as c:
        hits = c.get("search", params={"q": "rotate logs", "mode": "keyword"}).json()["hits"]
        assert hits[0]["index"] == "site" and hits[0]["anchor"] == "rotate"
        assert c.get("v1/vector_stores/site").json()["id"] == "site"
    assert served.stop() == 0
    assert not any("Traceback" in line for line in served.stderr)


def test_serve_reloads_without_dropping_requests(
    live: tuple[Path, Served], packs: dict[str, bytes]
) -> None:
    path, served = live
    failures: list[str] = []
    done = 0
    stop = threading.Event()

    def hammer() -> None:
        nonlocal done
        with httpx.Client(base_url=served.url, timeout=30) as c:
            while not stop.is_set():
                r = c.get("search", params={"q": "logs", "mode": "keyword"})
                if r.status_code != 200:
                    failures.append(r.text)
                done += 1

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        with httpx.Client(base_url=served.url, timeout=10) as c:
            for round_ in range(4):
                want = 1 if round_ % 2 == 0 else 5
                replace(path, packs["faq"] if want == 1 else packs["docs"])
                deadline = time.monotonic() + 20
                while chunks(c) != want:
                    assert time.monotonic() < deadline, "".join(served.stderr)
                    time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []
    assert done > 0
    served.wait_for_log("site: reloaded")


def test_serve_keeps_the_old_index_when_the_new_one_is_corrupt(
    live: tuple[Path, Served], packs: dict[str, bytes]
) -> None:
    path, served = live
    data = packs["faq"]
    replace(path, data[: len(data) // 2])  # truncated: a valid start, the arrays missing
    served.wait_for_log("cannot be loaded, still serving the previous index")
    with httpx.Client(base_url=served.url, timeout=10) as c:
        assert chunks(c) == 5
        assert c.get("search", params={"q": "logs"}).status_code == 200
        replace(path, b"not an index at all")
        time.sleep(0.3)
        assert chunks(c) == 5
        replace(path, data)  # a good file again is picked up
        deadline = time.monotonic() + 20
        while chunks(c) != 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert served.stop() == 0


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scidx", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_corrupt_index_at_startup_exits_4(tmp_path: Path, packs: dict[str, bytes]) -> None:
    bad = tmp_path / "bad.scidx"
    bad.write_bytes(packs["docs"][:200])
    good = tmp_path / "good.scidx"
    good.write_bytes(packs["docs"])
    result = run_cli(str(good), str(bad), "--port", "0")
    assert result.returncode == 4, result.stderr
    assert result.stderr.startswith("error: ") and str(bad) in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    # Flipped bytes inside an array: caught by the checksums (--verify is the default).
    flipped = bytearray(packs["docs"])
    flipped[-40] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    result = run_cli(str(bad), "--port", "0")
    assert result.returncode == 4 and str(bad) in result.stderr


def test_startup_errors(tmp_path: Path, packs: dict[str, bytes]) -> None:
    good = tmp_path / "good.scidx"
    good.write_bytes(packs["docs"])
    missing = run_cli(str(tmp_path / "nope.scidx"), "--port", "0")
    assert missing.returncode == 1 and "nope.scidx" in missing.stderr
    assert "Traceback" not in missing.stderr
    twice = run_cli(str(good), str(good), "--port", "0")
    assert twice.returncode == 1 and "two indexes are named 'good'" in twice.stderr
    mode = run_cli(str(good), "--mode", "fuzzy", "--port", "0")
    assert mode.returncode == 1 and "default_mode must be one of" in mode.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        busy = run_cli(str(good), "--port", str(port))
    assert busy.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr


def _write_in_place(path: Path, data: bytes, pieces: int = 4, pause: float = 0.08) -> None:
    """What ``cp`` / ``rsync --inplace`` do: the same inode rewritten, slowly, piece by piece."""
    step = -(-len(data) // pieces)
    with open(path, "r+b") as f:
        for start in range(0, len(data), step):
            f.write(data[start : start + step])
            f.flush()
            os.fsync(f.fileno())
            time.sleep(pause)
        f.truncate(len(data))


@pytest.mark.parametrize("load", ["auto", "copy"])
def test_serve_survives_in_place_rewrites_under_load(
    tmp_path: Path, packs: dict[str, bytes], load: str
) -> None:
    """Issue 24 #1: truncation and slow in-place copies under 8 clients: no error, no path."""
    path = tmp_path / "live.scidx"
    path.write_bytes(packs["docs"])
    served = Served(f"site={path}", "--port", "0", "--reload-interval", "0.02", "--load", load)
    failures: list[str] = []
    done = 0
    stop = threading.Event()
    requests = [
        ("GET", "search", {"params": {"q": "logs", "mode": "keyword"}}),
        ("GET", "search", {"params": {"q": "rotate nginx logs"}}),
        ("POST", "v1/vector_stores/site/search", {"json": {"query": "cache logs"}}),
        ("GET", "healthz", {}),
    ]

    def hammer(i: int) -> None:
        nonlocal done
        with httpx.Client(base_url=served.url, timeout=30) as c:
            while not stop.is_set():
                method, url, kwargs = requests[(i + done) % len(requests)]
                try:
                    r = c.request(method, url, **kwargs)  # type: ignore[arg-type]
                except httpx.HTTPError as exc:
                    failures.append(f"{url}: {exc!r}")
                    return
                if r.status_code != 200 or str(tmp_path) in r.text or "live.scidx" in r.text:
                    failures.append(f"{url}: {r.status_code} {r.text[:300]}")
                done += 1

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    try:
        with httpx.Client(base_url=served.url, timeout=10) as c:
            for data, want in ((packs["faq"], 1), (packs["docs"], 5)):
                os.truncate(path, 0)  # a truncation alone...
                time.sleep(0.3)
                assert chunks(c) in (1, 5)
                _write_in_place(path, data)  # ...then the new bytes, slowly
                deadline = time.monotonic() + 20
                while chunks(c) != want:
                    assert time.monotonic() < deadline, "".join(served.stderr)
                    time.sleep(0.05)
            # rsync --inplace: the old bytes overwritten without a truncation first.
            half = len(packs["docs"]) // 2
            os.truncate(path, half)
            time.sleep(0.3)
            _write_in_place(path, packs["faq"])
            deadline = time.monotonic() + 20
            while chunks(c) != 1:
                assert time.monotonic() < deadline, "".join(served.stderr)
                time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join()
        code = served.stop()
    assert failures == []
    assert done > 100
    assert code == 0, "".join(served.stderr)
    assert not any("Traceback" in line for line in served.stderr)


def test_serve_answers_only_its_own_host_names(tmp_path: Path, packs: dict[str, bytes]) -> None:
    """Issue 24 #4: a foreign Host (DNS rebinding) is refused; the bound names are answered."""
    path = tmp_path / "docs.scidx"
    path.write_bytes(packs["docs"])
    served = Served(str(path), "--port", "0", "--allowed-host", "docs.internal")
    port = served.url.rstrip("/").rsplit(":", 1)[1]
    try:
        with httpx.Client(base_url=served.url, timeout=10) as c:
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.2", "localhost.evil"):
                for url in ("/", "/healthz", "/search?q=logs", "/v1/vector_stores"):
                    r = c.get(url, headers={"Host": host})
                    assert r.status_code == 400, (host, url, r.text)
                    assert r.json()["error"]["code"] == "invalid_host"
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", "docs.internal."):
                assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
    finally:
        assert served.stop() == 0


def test_serve_bounds_slow_and_excess_connections(tmp_path: Path, packs: dict[str, bytes]) -> None:
    """Issue 24 #11: slowloris sockets are cut at the read deadline; beyond the cap, 503 at once."""
    path = tmp_path / "docs.scidx"
    path.write_bytes(packs["docs"])
    served = Served(str(path), "--port", "0", "--read-timeout", "1", "--max-connections", "20")
    port = int(served.url.rstrip("/").rsplit(":", 1)[1])
    socks: list[socket.socket] = []
    try:
        for _ in range(30):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            s.setblocking(False)
            socks.append(s)
        start = time.monotonic()
        answers = [b""] * len(socks)
        closed: dict[int, float] = {}
        while len(closed) < len(socks) and time.monotonic() - start < 10:
            for i, s in enumerate(socks):
                if i in closed:
                    continue
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    try:
                        s.send(b"a")  # one header byte every 0.1 s: never a whole request
                    except OSError:
                        closed[i] = time.monotonic() - start
                    continue
                except OSError:
                    data = b""
                answers[i] += data
                if not data:
                    closed[i] = time.monotonic() - start
            time.sleep(0.1)
        assert len(closed) == len(socks), "some slow connections were never closed"
        busy = [i for i, a in enumerate(answers) if a.startswith(b"HTTP/1.1 503")]
        slow = [i for i, a in enumerate(answers) if a.startswith(b"HTTP/1.1 408")]
        assert len(busy) == 10 and len(slow) == 20, answers
        assert all(closed[i] < 0.9 for i in busy), closed
        assert all(0.9 <= closed[i] < 4 for i in slow), closed
        with httpx.Client(base_url=served.url, timeout=10) as c:  # others are served again
            assert c.get("/healthz").status_code == 200
        # A body that never completes, and a kept-alive connection's next request: cut too.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(
                b"POST /v1/vector_stores/docs/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            assert s.recv(4096).startswith(b"HTTP/1.1 408")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\n")
            got = b""
            while b"408" not in got:
                more = s.recv(4096)
                assert more, got
                got += more
            assert got.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in got
    finally:
        for s in socks:
            s.close()
        code = served.stop()
    assert code == 0
    assert not any("Traceback" in line for line in served.stderr)


def test_serve_load_map_warns_and_refuses_or_reloads_an_in_place_rewrite(
    tmp_path: Path, packs: dict[str, bytes]
) -> None:
    """Issue 39 #7: ``--load map`` warns at start; a request meets a rewritten file checked.

    The watcher is slowed to an hour, so only the request-side check (stat before touching the
    mapping) can notice: a torn (truncated) file is refused with 503, a complete one reloaded.
    """
    path = tmp_path / "mapped.scidx"
    path.write_bytes(packs["docs"])
    served = Served(str(path), "--port", "0", "--load", "map", "--reload-interval", "3600")
    try:
        served.wait_for_log("warning: --load map reads the index files themselves")
        with httpx.Client(base_url=served.url, timeout=10) as c:
            assert c.get("/search", params={"q": "kubectl"}).status_code == 200
            os.truncate(path, len(packs["docs"]) // 2)  # in place: same inode, shorter
            for _ in range(3):
                r = c.get("/search", params={"q": "kubectl"})
                assert r.status_code == 503, r.text
                assert r.json()["error"]["code"] == "index_rewritten"
                assert "renaming over the old one" in r.json()["error"]["message"]
            _write_in_place(path, packs["faq"], pause=0.0)
            r = c.get("/search", params={"q": "logs"})
            assert r.status_code == 200, r.text
            assert [h["source"] for h in r.json()["hits"]] == ["faq.md"]
            assert chunks(c) == 1
    finally:
        code = served.stop()
    assert code == 0, "".join(served.stderr)
    assert not any("Traceback" in line for line in served.stderr)
