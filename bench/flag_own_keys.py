"""The possibly-flawed flag on the generator's own keys, on inputs it was not tuned on (issue 54):
the field pictures with their truth and the packaged pictures, each with today's keys (two
readings) and older single-reading keys, apart from seeded wrong keys.

    python bench/flag_own_keys.py [--per-family 3] [--seed 0] [--sources field packaged degraded]

`degraded` is the field pictures and the hard drawings spoilt in ways that move nothing in them
(blur, noise, low contrast, a third of the size blown up again, JPEG 15;
`flag_field.DEGRADATIONS`), keyed with a single reading: there the generator makes mistakes of
its own in numbers, and each way is reported apart.

Prints, per source and pooled, the share of the generator's own wrong keys the evidence reader
flags (goal: 90% or more; an abstention counts as not caught), its false alarms on right keys
(goal: 10% or less), each with its Wilson 95% interval in brackets, its hit rate on seeded
wrong keys (the easy case), the abstentions, both rates again as they would be if an abstention
(the reader cannot confirm the key) counted as a doubt, the counts behind each figure, and the
missed keys and false alarms. The flag measured is the evidence reader's vote alone: offline the
models' vote comes from a model that reads the facts, not the pixels, so it is no independent
measure here.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def _row(name: str, flags) -> str:  # noqa: ANN001  (devtools.flag_check.FlagRates)
    def share(sort: str) -> str:
        n = flags.keys[sort]
        if not n:
            return "-"
        low, high = flags.interval(sort)
        return f"{flags.flagged[sort]}/{n} = {100 * flags.rate(sort):.1f}% [{100 * low:.1f}, {100 * high:.1f}]"

    abstained = ", ".join(f"{s} {flags.abstained[s]}" for s in ("wrong", "right", "seeded"))
    return f"| {name} | {share('wrong')} | {share('right')} | {share('seeded')} | {abstained} |"


def _doubt(flags) -> str:  # noqa: ANN001  (devtools.flag_check.FlagRates)
    """The rates if each abstention (the reader cannot confirm the key) flagged it too."""
    from benchfoundry.devtools.flag_check import wilson
    from benchfoundry.devtools.flag_field import doubted

    def share(sort: str, what: str) -> str:
        hits, n = doubted(flags, sort)
        if not n:
            return f"{what} - (no such keys)"
        low, high = wilson(hits, n)
        return f"{what} {hits}/{n} = {100 * hits / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"

    return f"{share('wrong', 'own wrong keys caught')}, {share('right', 'right keys flagged')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sources",
        nargs="+",
        default=["field", "packaged"],
        help="field, field-jpeg, packaged, hard, degraded",
    )
    parser.add_argument(
        "--degraded-per-family", type=int, default=1, help="pictures per family in 'degraded'"
    )
    parser.add_argument("--show", type=int, default=12, help="missed keys and false alarms shown")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-flag-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.devtools.flag_check import ENSEMBLES, models_vote_kept
    from benchfoundry.devtools.flag_field import degraded_flags, own_key_flags
    from benchfoundry.evidence.text import available

    started = time.perf_counter()
    drawn = tuple(s for s in args.sources if s != "degraded")
    results = own_key_flags(work, args.seed, args.per_family, drawn) if drawn else []
    if "degraded" in args.sources:
        results += degraded_flags(work, args.seed, args.degraded_per_family)
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()} "
        f"({platform.processor() or 'cpu'}), seed {args.seed}, {args.per_family} per family; "
        f"Tesseract {'found' if available() else 'MISSING (text checks abstain)'}"
    )
    print(
        "| keys | own wrong keys caught | right keys flagged | seeded wrong keys caught | "
        "abstained |"
    )
    print("|---|---|---|---|---|")
    pooled = None
    for r in results:
        name = f"{r.source}, {r.readings} ({r.pictures} pictures, {r.candidates} questions)"
        print(_row(name, r.flags))
        pooled = r.flags if pooled is None else pooled.merged(r.flags)
    if pooled is not None:
        print(_row("all of them", pooled))
        print("\nif an abstention were a doubt (the flag itself does not count them):")
        for r in results:
            print(f"  {r.source}, {r.readings}: {_doubt(r.flags)}")
        print(f"  all of them: {_doubt(pooled)}")
        print("\nper template kind (all sources):")
        for kind, tally in sorted(pooled.by_kind.items()):
            print(f"  {kind:<20} " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
        compared, same, added = models_vote_kept(pooled.verdicts)
        print(
            f"\nthe reader switched off: the models' vote is the same in {same} of {compared} "
            f"verdicts ({len(ENSEMBLES)} ensemble outcomes x {len(pooled.verdicts)} keys); "
            f"the reader flagged {added} on top of it"
        )
        for line in pooled.missed[: args.show]:
            print("  missed:", line)
        for line in pooled.false_alarms[: args.show]:
            print("  false alarm:", line)
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
