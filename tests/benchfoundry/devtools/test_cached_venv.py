"""Folders made once per machine: two processes racing build it once, a half-made one (no
completion marker) is built again, and pip that cannot reach the registry says so."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from benchfoundry.devtools.cached_venv import (
    MARKER,
    RegistryUnreachable,
    build_once,
    cache_root,
    cached_venv,
)

RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from benchfoundry.devtools.cached_venv import build_once

    def build(target):
        with open(sys.argv[2], "a") as log:
            log.write("built\\n")
        target.mkdir()
        time.sleep(1.0)  # long enough for the other process to reach the lock
        (target / "thing").write_text("made")

    print(build_once(Path(sys.argv[1]), "v1", build))
    """
)


def test_two_processes_racing_build_it_once(tmp_path):
    target, log = tmp_path / "cache" / "thing", tmp_path / "builds.log"
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(target), str(log)]) for _ in range(2)
    ]
    assert [r.wait(timeout=120) for r in racers] == [0, 0]
    assert log.read_text() == "built\n"
    assert (target / "thing").read_text() == "made" and (target / MARKER).read_text() == "v1"


def test_a_half_made_or_outdated_folder_is_built_again(tmp_path):
    target, builds = tmp_path / "thing", []

    def build(folder):
        builds.append(folder)
        folder.mkdir()
        (folder / "thing").write_text(str(len(builds)))

    target.mkdir()
    (target / "leftover").write_text("killed halfway")  # no marker
    assert build_once(target, "v1", build) == target
    assert not (target / "leftover").exists() and (target / "thing").read_text() == "1"
    build_once(target, "v1", build)
    assert len(builds) == 1  # built and stamped: kept
    build_once(target, "v2", build)
    assert len(builds) == 2 and (target / MARKER).read_text() == "v2"


def test_a_registry_that_cannot_be_reached_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")  # no local wheels or mirrors
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_RETRIES", "1")
    with pytest.raises(RegistryUnreachable, match="registry could not be reached"):
        cached_venv("venv-unreachable", ["benchfoundry-no-such-package==0.0.1"], timeout_s=120)
    assert cache_root() == tmp_path / "benchfoundry"
    assert not (cache_root() / "venv-unreachable" / MARKER).exists()
