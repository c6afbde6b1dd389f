"""Headless Chromium for the browser tests: where it is, how to start it, where artifacts go.

Playwright never downloads a browser here: it drives Debian's package, which ``.ci/run``
installs. Without it the tests skip, unless ``SCIDX_REQUIRE_BROWSER=1`` (set by CI).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

__all__ = ["BROWSERS", "FLAGS", "ROOT", "artifact", "chromium"]

ROOT = Path(__file__).resolve().parent.parent.parent
BROWSERS = ("chromium-headless-shell", "chromium")
# This machine's network is closed: without these, Chromium keeps trying to reach Google.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    for name in (os.environ.get("SCIDX_CHROMIUM", ""), *BROWSERS):
        found = shutil.which(name) if name else None
        if found:
            return found
    msg = "no Chromium (apt-get install chromium-headless-shell; .ci/run does)"
    if os.environ.get("SCIDX_REQUIRE_BROWSER") == "1":
        pytest.fail(msg + "; SCIDX_REQUIRE_BROWSER=1 requires it", pytrace=False)
    pytest.skip(msg)


def artifact(name: str) -> Path:
    folder = Path(os.environ.get("SCIDX_ARTIFACTS", ROOT / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
