"""`bench/gpu_check.py` runs where there is no GPU too (tiny random model, CPU), so the script a
GPU machine is handed is known to work: every figure printed, the checks true."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_the_gpu_check_runs_clean_on_a_cpu(tmp_path):
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "gpu_check.py"), "--device", "cpu"]
        + ["--sizes", "tiny", "--questions", "32", "--chunk", "16", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(out.read_text())
    # the CPU's own precision: bfloat16 where it has the matrix units for it (Intel's AMX tiles,
    # in the CPU's flags as the kernel lists them; none on an AMD EPYC: float32)
    flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    assert row["dtype"] == ("bfloat16" if " amx_tile" in flags else "float32")
    assert row["device"] == "cpu"
    assert row["all_finite"] and row["batched_equals_one_by_one"] and row["equals_cpu_float32"]
    assert row["questions"] == 32 and row["questions_per_s"] > 0
    assert row["plain_forward_tokens_per_s"] > 0 and row["generate_tokens_per_s"] > 0
