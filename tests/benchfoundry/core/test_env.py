"""The process settings `env.configure()` makes before Prefect or torch is imported."""

from __future__ import annotations

import os
import subprocess
import sys

from benchfoundry.core import env


def _configured(extra: dict[str, str], names: list[str], tmp_path) -> list[str]:
    """The values of `names` after `configure()` in a fresh process whose environment has
    `extra` and none of the defaults."""
    base = {k: v for k, v in os.environ.items() if k not in env.DEFAULTS}
    code = (
        "import os, sys\n"
        "from benchfoundry.core import env\n"
        f"env.configure({str(tmp_path)!r})\n"
        "print('\\n'.join(os.environ.get(n, '') for n in sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *names],
        env={**base, **extra},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_local_model_threads_sleep_while_waiting_unless_the_user_says_otherwise(tmp_path):
    assert _configured({}, ["OMP_WAIT_POLICY", "HF_HUB_OFFLINE"], tmp_path) == ["PASSIVE", "1"]
    assert _configured({"OMP_WAIT_POLICY": "ACTIVE"}, ["OMP_WAIT_POLICY"], tmp_path) == ["ACTIVE"]
