"""Process settings for running offline on Prefect's embedded local API.

Call `configure()` before anything imports Prefect: it keeps Prefect's home inside the working
folder, turns analytics off, gives the temporary local server time to start on slow machines, and
tells Hugging Face libraries to stay offline. Values the user already set are left alone.

It also makes the OpenMP threads of local models (torch on the CPU) sleep while they wait for
work instead of spinning (`OMP_WAIT_POLICY=PASSIVE`): on a machine whose cores other jobs share,
a spinning thread holds a core its partner needs, and a small model's many short parallel steps
then run several times slower. It is read when torch is first imported, so `configure()` must
come before that too.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULTS = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "GX_ANALYTICS_ENABLED": "False",  # Great Expectations (the publish gate): no analytics
    "OMP_WAIT_POLICY": "PASSIVE",  # torch's CPU threads sleep between steps (see above)
}


def configure(
    workdir: str | os.PathLike[str] | None = None, console_level: str | None = None
) -> Path:
    """Set the offline defaults; return the Prefect home in use."""
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
    home = Path(workdir or Path.cwd()) / ".prefect"
    os.environ.setdefault("PREFECT_HOME", str(home))
    if console_level:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", console_level)
    return Path(os.environ["PREFECT_HOME"])
