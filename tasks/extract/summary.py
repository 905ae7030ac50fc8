"""The extract stage's summary, and how it shows itself (artifact, closing report)."""

from __future__ import annotations

from benchfoundry.core.summary import StageSummary


class ExtractSummary(StageSummary):
    run: str
    config_hash: str
    extractors: list[dict[str, str | None]]
    images_total: int
    images_already_done: int
    images_extracted: int
    quarantined_by_reason: dict[str, int]
    mean_instances: float
    mean_ocr_lines: float
    mean_captions: float
    seconds_by_backend: dict[str, float]
    seconds_total: float
    example_image: str | None
    example_context: str | None
    processes: int = 1  # distinct processes that extracted batches (Dask workers, or this one)
    in_flow_process: bool = True  # whether any batch ran in the flow's own process
    segments_tracked: int = 0  # video segments given motion facts by this run

    def markdown(self) -> str:
        lines = [
            "# Extract",
            "",
            f"Configuration `{self.config_hash}`: "
            + ", ".join(f"{e['role']} = {e['backend']}" for e in self.extractors),
            "",
            "| count | value |",
            "|---|---|",
            f"| images in the run | {self.images_total} |",
            f"| already extracted | {self.images_already_done} |",
            f"| extracted now | {self.images_extracted} |",
            f"| instances per image | {self.mean_instances:.1f} |",
            f"| OCR lines per image | {self.mean_ocr_lines:.1f} |",
            f"| captions per image | {self.mean_captions:.1f} |",
            f"| video segments given motion facts | {self.segments_tracked} |",
            f"| quarantined | {sum(self.quarantined_by_reason.values())} |",
            "",
            "| backend | seconds |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v:.2f} |" for k, v in self.seconds_by_backend.items()]
        lines += [f"| total (wall) | {self.seconds_total:.2f} |"]
        if self.example_context:
            lines += [
                "",
                f"## Visual context of image `{self.example_image[:12]}`",
                "",
                "```",
                self.example_context,
                "```",
            ]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        backends = ", ".join(f"{e['role']} {e['backend']}" for e in self.extractors)
        out = [
            "",
            f"Extract ({backends}):",
            f"  images extracted {self.images_extracted}, already done {self.images_already_done}"
            + (
                f"; per image: {self.mean_instances:.1f} instances, {self.mean_ocr_lines:.1f} OCR lines, "
                f"{self.mean_captions:.1f} captions"
                if self.images_extracted
                else " (nothing new to extract)"
            ),
            "  seconds by backend: "
            + (", ".join(f"{k} {v:.1f}" for k, v in self.seconds_by_backend.items()) or "none")
            + f" (wall {self.seconds_total:.1f})",
        ]
        if self.example_context and self.example_image:
            out += [
                f"  visual context of image {self.example_image[:12]} (what a question writer reads):"
            ]
            out += [f"    {line}" for line in self.example_context.splitlines()[:14]]
        return out
