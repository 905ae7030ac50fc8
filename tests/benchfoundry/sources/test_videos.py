"""The annotation readers of `videos` sources, in the three forms, before any decoding."""

import json

import numpy as np

from benchfoundry.core.video import encode_clip
from benchfoundry.sources.models import VideoSource
from benchfoundry.sources.videos import read_videos


def _clip(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_clip([np.full((32, 32, 3), 9 * i, np.uint8) for i in range(6)], fps=6))


def test_epic_kitchens_rows_become_timed_segments_with_their_verb(tmp_path):
    _clip(tmp_path / "P01" / "videos" / "P01_01.MP4")
    (tmp_path / "EPIC_100_validation.csv").write_text(
        "narration_id,participant_id,video_id,start_timestamp,stop_timestamp,narration,verb,noun\n"
        "P01_01_0,P01,P01_01,00:00:00.14,00:00:00.80,open door,open,door\n"
        "P01_01_1,P01,P01_01,00:01:02.50,00:01:01.00,close door,close,door\n"
        "P01_01_2,P01,P01_09,00:00:00.00,00:00:00.50,take cup,take,cup\n"
        "P01_01_3,P01,P01_01,00:00:00.10,00:00:00.50,,wash,plate\n"
    )
    items = read_videos(
        VideoSource(path=tmp_path, annotations=tmp_path / "EPIC_100_validation.csv",
                    format="epic_kitchens")
    )  # fmt: skip
    (segment,) = items.segments
    assert (segment.video, segment.start, segment.end) == ("P01/videos/P01_01.MP4", 0.14, 0.8)
    assert (segment.label, segment.family, segment.noun) == ("open door", "open", "door")
    assert [c.name for c in items.clips] == ["P01/videos/P01_01.MP4"]
    reasons = {r.source.rsplit("#", 1)[1]: r.reason for r in items.rejections}
    assert reasons == {"line=3": "bad_segment", "line=4": "missing_clip", "line=5": "empty_label"}


def test_ssv2_keeps_its_template_and_names_unannotated_clips(tmp_path):
    for name in ("7.webm", "8.mp4"):
        _clip(tmp_path / name)
    labels = [{"id": "7", "label": "Moving cup up", "template": "Moving [something] up",
               "placeholders": ["cup"]}, {"label": "no id"}]  # fmt: skip
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    items = read_videos(
        VideoSource(path=tmp_path, annotations=tmp_path / "labels.json", format="ssv2")
    )
    (segment,) = items.segments
    assert (segment.video, segment.start, segment.end) == ("7.webm", None, None)
    assert segment.family == "Moving [something] up" and segment.placeholders == ("cup",)
    assert sorted(r.reason for r in items.rejections) == [
        "malformed_annotation",
        "unannotated_clip",
    ]


def test_a_segments_csv_may_carry_a_verb_and_a_noun(tmp_path):
    """EPIC-KITCHENS' columns in the segments form: the label's parts as the file gives them;
    a file without them keeps its labels alone."""
    _clip(tmp_path / "p.mp4")
    (tmp_path / "with.csv").write_text(
        "video,start,end,label,verb,noun\n"
        "p.mp4,0,0.5,lift the red circle up,lift-up,red circle\n"
        "p.mp4,0.5,1,put the red circle down,,\n"
    )
    (tmp_path / "without.csv").write_text("video,start,end,label\np.mp4,0,1,stir the pan\n")
    first, second = read_videos(
        VideoSource(path=tmp_path, annotations=tmp_path / "with.csv")
    ).segments
    assert (first.family, first.noun, first.placeholders) == ("lift-up", "red circle", ())
    assert (second.family, second.noun) == (None, None)
    (bare,) = read_videos(VideoSource(path=tmp_path, annotations=tmp_path / "without.csv")).segments
    assert (bare.label, bare.family, bare.noun) == ("stir the pan", None, None)
