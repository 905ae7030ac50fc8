"""Cutting a stretch out of a clip (PyAV): the cut holds the frames that start in the stretch and
nothing else, from time 0, so a question that may show 0.5-1.5 s cannot show what comes after."""

import numpy as np
import pytest

from benchfoundry.core.video import ClipRejected, cut, encode_clip, frames_at, inspect_clip


def _levels(data: bytes) -> list[float]:
    """The mean grey level of every frame of a clip, in order."""
    import io

    import av

    with av.open(io.BytesIO(data)) as container:
        return [float(f.to_ndarray(format="gray").mean()) for f in container.decode(video=0)]


@pytest.fixture(scope="module")
def clip() -> bytes:
    """24 frames at 12 fps (2 s); frame i is uniformly grey at level 10 * i, so a frame's level
    says which source frame it is."""
    return encode_clip([np.full((48, 64, 3), 10 * i, np.uint8) for i in range(24)], fps=12)


def test_a_cut_holds_exactly_the_frames_of_its_stretch(clip):
    part = cut(clip, 0.5, 1.5)
    info = inspect_clip(part)
    assert (info.frames, info.duration, info.fps) == (12, 1.0, 12.0)
    levels = _levels(part)
    # frames 6..17 of the source, none before or after (H.264 is lossy: within 3 levels)
    assert all(abs(got - 10 * (6 + k)) <= 3 for k, got in enumerate(levels)), levels
    # sampled frames of the cut all come from the stretch
    sampled = [np.asarray(f.convert("L")).mean() for f in frames_at(part, [0.0, 0.5, 0.99])]
    assert all(57 <= level <= 173 for level in sampled), sampled


def test_a_stretch_off_the_frame_grid_keeps_the_frames_that_start_in_it(clip):
    part = cut(clip, 0.52, 1.0)  # frames 7..11 start in it (frame 6 starts at 0.5 s)
    info = inspect_clip(part)
    assert info.frames == 5 and info.duration == round(5 / 12, 3)
    assert [round(x / 10) for x in _levels(part)] == [7, 8, 9, 10, 11]


def test_a_stretch_with_no_frame_is_refused(clip):
    with pytest.raises(ClipRejected, match="no frame between"):
        cut(clip, 5.0, 6.0)


def test_bytes_that_are_no_video_are_said_to_be_none_in_plain_words():
    with pytest.raises(ClipRejected) as raised:
        inspect_clip(b"this is a text file, not a clip\n" * 10)
    assert raised.value.reason == "undecodable_clip"
    assert raised.value.detail.startswith("not a video file (FFmpeg could not read it: ")
    assert "Errno" not in raised.value.detail and "<none>" not in raised.value.detail
