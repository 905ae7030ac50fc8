"""Virtual environments made once per machine in the user's cache, for tools whose pins clash with
ours (Label Studio pins its own Django and numpy; SAM wants another torch).

`cached_venv(name, pins)` returns `${XDG_CACHE_HOME:-~/.cache}/benchfoundry/<name>` with exactly
`pins` installed. A venv is not relocatable, so it is built in place under an exclusive lock (two
pytest workers or two runs wait for the one that builds) and a completion marker naming the pins
is written last: a venv without it (a build that was killed halfway) or with other pins is
cleared and built again. `build_once` does the same for any folder made once per machine."""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)
MARKER = "benchfoundry-pins.txt"
# What pip says when it cannot reach the package index (rather than refusing what it found).
_UNREACHABLE = re.compile(
    r"NewConnectionError|Max retries exceeded|Temporary failure in name resolution|"
    r"Network is unreachable|Connection refused|Could not fetch URL|ConnectTimeout|ReadTimeout|ProxyError",
)


class RegistryUnreachable(RuntimeError):
    """pip could not reach the package registry."""


def cache_root() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/benchfoundry`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchfoundry"


def _ready(target: Path, stamp: str) -> bool:
    marker = target / MARKER
    return marker.exists() and marker.read_text() == stamp


def build_once(target: Path, stamp: str, build: Callable[[Path], None]) -> Path:
    """`target`, a folder built by `build(target)` once per machine for `stamp` (the pins, a
    version): under an exclusive lock beside it, with `stamp` written into it last. A folder
    without the stamp (a build killed halfway) or with another stamp is removed and built again;
    processes that wait on the lock find it built."""
    if _ready(target, stamp):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
        if not _ready(target, stamp):
            log.info("building %s (%s), once per machine", target, stamp)
            shutil.rmtree(target, ignore_errors=True)
            build(target)
            (target / MARKER).write_text(stamp)
    return target


def site_packages(venv: Path) -> Path:
    """A venv's site folder (made by this Python's version)."""
    return (
        venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    )


def cached_venv(
    name: str, pins: list[str], *, timeout_s: float = 1800, beneath: Path | None = None
) -> Path:
    """The venv `name` in the cache with `pins` installed, built first if needed (see module
    docstring). With `beneath` (another venv), that venv's site folder comes after this one's
    on the path, named in a `.pth` before pip runs: pip counts what it holds as installed and
    adds only the rest, so a tool that needs that venv's heavy packages (its torch) gets a venv
    of its own without a second copy of them, and that venv is left as it was (this one is
    built again when that one's pins change). Raises
    RegistryUnreachable when pip cannot reach the registry, RuntimeError on any other failed
    build."""

    def build(venv: Path) -> None:
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
        if beneath is not None:  # a bare path line: the folder alone, not the .pth files in it
            (site_packages(venv) / "zz-beneath.pth").write_text(f"{site_packages(beneath)}\n")
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *pins],
            capture_output=True, text=True, timeout=timeout_s,
        )  # fmt: skip
        if done.returncode != 0:
            said = done.stdout + done.stderr
            tail = said[-3000:]
            if _UNREACHABLE.search(said):
                raise RegistryUnreachable(
                    f"the package registry could not be reached for {' '.join(pins)}:\n{tail}"
                )
            raise RuntimeError(f"pip install {' '.join(pins)} into {venv} failed:\n{tail}")

    stamp = " ".join(pins)
    if beneath is not None:  # built again when that venv is built with other pins
        under = beneath / MARKER
        stamp += f" beneath {beneath} ({under.read_text() if under.exists() else 'unstamped'})"
    return build_once(cache_root() / name, stamp, build)
