"""Progress where there is no terminal: plain lines per step, throttled, with rate and time left."""

from benchfoundry.core import progress
from benchfoundry.core.progress import LineProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_throttled_per_step_and_the_last_is_always_written():
    lines: list[str] = []
    clock = Clock()
    listener = LineProgress(lines.append, interval=5.0, clock=clock)
    listener("decode images", 10, 100)  # the first report is written at once
    clock.now += 1
    listener("decode images", 10, 100)  # within the interval: not written
    listener("consensus m", 1, 4)  # another step has its own clock
    clock.now += 4
    listener("decode images", 20, 100)
    clock.now += 5
    listener("decode images", 60, 100)  # completes
    assert lines == [
        "decode images: 10 of 100 (10%)",
        "consensus m: 1 of 4 (25%)",
        "decode images: 40 of 100 (40%), 8.0/s, about 8s left",
        "decode images: 100 of 100 (100%), 10.0/s, done in 10s",
    ]


def test_a_step_without_a_total_says_what_it_has_done():
    lines: list[str] = []
    clock = Clock()
    listener = LineProgress(lines.append, interval=0, clock=clock)
    with progress.listening(listener):
        progress.report("read sources", 1)
        clock.now += 2
        progress.report("read sources", 1)
    progress.report("read sources", 1)  # nobody listening any more
    assert lines == ["read sources: 1", "read sources: 2, 1.0/s"]
