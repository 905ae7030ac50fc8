"""Decode and verify video clips for real (PyAV, FFmpeg's libraries), describe them, and sample
frames from a stretch of a clip as SEED-Bench and VLMEvalKit do: N frames, uniformly spaced.

Every refusal is a `ClipRejected` with a reason code from `REASONS`, so callers write a quarantine
row instead of losing the input.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

KEYFRAME = "keyframe"  # the images table's source kind for a frame sampled from a clip
VIDEO_SUFFIXES = frozenset({".mp4", ".webm", ".mkv", ".mov", ".avi", ".m4v"})

REASONS: dict[str, str] = {
    "empty_clip": "the clip's file holds zero bytes",
    "undecodable_clip": "the bytes are not a video FFmpeg can open (or no video stream in them)",
    "truncated_clip": "the clip's data ends early or a frame does not decode",
    "clip_too_long": "the clip is longer than `ingest.max_clip_seconds`",
    "clip_too_large": "the clip's width x height is above `ingest.max_pixels`",
    "clip_too_small": "the clip's shorter side is below `ingest.min_side`",
}


class ClipRejected(Exception):
    """A clip that ingestion refuses, with a reason code and a readable detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class ClipLimits:
    min_side: int = 32
    max_pixels: int = 50_000_000
    max_seconds: float = 600.0


@dataclass(frozen=True)
class ClipInfo:
    """What verification learned about a clip: every frame was decoded to learn it."""

    duration: float  # seconds, from the last frame's time plus one frame
    fps: float
    width: int
    height: int
    codec: str
    container: str
    frames: int


_TURNS = {
    90: Image.Transpose.ROTATE_90,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_270,
}


def _turn(frame) -> Image.Transpose | None:  # noqa: ANN001 - av's VideoFrame
    """How to turn a decoded frame upright: the container's display rotation (a phone's portrait
    clip is stored sideways with a 90 degree display matrix), counter-clockwise as FFmpeg gives
    it; None when it is shown as stored."""
    try:
        degrees = round(float(frame.rotation or 0)) % 360
    except (AttributeError, TypeError, ValueError):  # no display matrix
        return None
    return _TURNS.get(degrees)


def upright(frame) -> Image.Image:  # noqa: ANN001 - av's VideoFrame
    """The frame as a player shows it, in RGB: its display rotation applied."""
    image = frame.to_image()
    turn = _turn(frame)
    return image.transpose(turn) if turn is not None else image


def _signature(data: bytes) -> str | None:
    """The container the first bytes announce (MP4/MOV, Matroska/WebM, AVI), if any."""
    if data[4:8] == b"ftyp":
        return "an MP4/MOV file"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "a Matroska/WebM file"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "an AVI file"
    return None


def _open(data: bytes):  # noqa: ANN202 - av's container type
    import av

    if not data:
        raise ClipRejected("empty_clip", "zero bytes")
    try:
        container = av.open(io.BytesIO(data), mode="r")
    except (av.FFmpegError, ValueError) as exc:
        if known := _signature(data):  # the start of a real clip whose rest is missing or bad
            raise ClipRejected(
                "truncated_clip", f"starts as {known} but does not open: {exc}"
            ) from None
        said = getattr(exc, "strerror", None) or str(exc)  # FFmpeg's words, without its errno
        raise ClipRejected(
            "undecodable_clip", f"not a video file (FFmpeg could not read it: {said})"
        ) from None
    if not container.streams.video:
        container.close()
        raise ClipRejected("undecodable_clip", "no video stream in it (audio or data only?)")
    return container


def inspect_clip(data: bytes, limits: ClipLimits = ClipLimits()) -> ClipInfo:
    """Decode every frame of the clip and describe it, or raise `ClipRejected` saying why not."""
    import av

    container = _open(data)
    try:
        stream = container.streams.video[0]
        codec = stream.codec_context.name
        width, height = stream.codec_context.width, stream.codec_context.height
        if width and height and width * height > limits.max_pixels:
            raise ClipRejected(
                "clip_too_large", f"{width}x{height} is above {limits.max_pixels} pixels"
            )
        if width and height and min(width, height) < limits.min_side:
            raise ClipRejected(
                "clip_too_small", f"{width}x{height}: a side below {limits.min_side}"
            )
        rate = float(stream.average_rate or stream.guessed_rate or 0) or 25.0
        times: list[float] = []
        try:
            for frame in container.decode(stream):
                if not times and _turn(frame) in (_TURNS[90], _TURNS[270]):
                    width, height = height, width  # shown on its side: the player's size
                times.append(float(frame.time) if frame.time is not None else len(times) / rate)
                if times[-1] > limits.max_seconds:
                    raise ClipRejected("clip_too_long", f"longer than {limits.max_seconds:g} s")
        except (av.FFmpegError, ValueError) as exc:
            raise ClipRejected("truncated_clip", f"{type(exc).__name__}: {exc}") from None
        declared = stream.frames or 0
        if not times:
            raise ClipRejected("truncated_clip", "no frame decodes")
        if declared and len(times) < declared * 0.9:
            raise ClipRejected(
                "truncated_clip", f"{len(times)} of the {declared} frames it declares decode"
            )
        duration = max(times) - min(times) + 1.0 / rate
        return ClipInfo(
            duration=round(duration, 3),
            fps=round(rate, 3),
            width=width,
            height=height,
            codec=codec,
            container=container.format.name.split(",")[0],
            frames=len(times),
        )
    finally:
        container.close()


def sample_times(start: float, end: float, n: int) -> list[float]:
    """N times spread uniformly over [start, end): the middle of each of N equal parts."""
    step = (end - start) / n
    return [round(start + step * (i + 0.5), 3) for i in range(n)]


def frames_at(data: bytes, times: list[float]) -> list[Image.Image]:
    """The frame shown at each time (the last frame that starts at or before it), in RGB, upright
    as a player shows it."""
    container = _open(data)
    try:
        stream = container.streams.video[0]
        rate = float(stream.average_rate or stream.guessed_rate or 0) or 25.0
        wanted = sorted(range(len(times)), key=lambda i: times[i])
        chosen: list[Image.Image | None] = [None] * len(times)
        k = 0
        last = None
        for index, frame in enumerate(container.decode(stream)):
            at = float(frame.time) if frame.time is not None else index / rate
            while k < len(wanted) and times[wanted[k]] < at and last is not None:
                chosen[wanted[k]] = last
                k += 1
            last = upright(frame)
            if k == len(wanted):
                break
        while k < len(wanted) and last is not None:
            chosen[wanted[k]] = last
            k += 1
        if any(c is None for c in chosen):
            raise ClipRejected("truncated_clip", "no frame decodes")
        return [c.convert("RGB") for c in chosen if c is not None]
    finally:
        container.close()


def cut(data: bytes, start: float, end: float) -> bytes:
    """The frames of [start, end) as a clip of their own (MP4, H.264, the clip's frame rate,
    time from 0), so a model or a release shown a stretch holds nothing outside it (an action
    prediction's answer, say). Re-encoded, so the cut is exact to the frame wherever the source's
    keyframes lie; a frame is in when it starts in the stretch. Frames are written upright (the
    source's display rotation applied to the pixels), so every player shows the same picture.
    Frames are encoded as they are decoded: memory does not grow with the stretch's length."""
    import av

    container = _open(data)
    stream = container.streams.video[0]
    rate = float(stream.average_rate or stream.guessed_rate or 0) or 25.0
    writer = _Writer(fps=max(1, round(rate)))
    try:
        for index, frame in enumerate(container.decode(stream)):
            at = float(frame.time) if frame.time is not None else index / rate
            if at >= end - 1e-6:
                break
            if at >= start - 1e-6:
                array = np.asarray(upright(frame).convert("RGB"))
                height, width = array.shape[:2]
                writer.add(array[: height - height % 2, : width - width % 2])  # even sides
    except (av.FFmpegError, ValueError) as exc:  # a frame that does not decode
        raise ClipRejected("truncated_clip", f"{type(exc).__name__}: {exc}") from None
    finally:
        container.close()
    if not writer.frames:
        raise ClipRejected("truncated_clip", f"no frame between {start:g} and {end:g} s")
    return writer.close()


def png_bytes(image: Image.Image) -> bytes:
    """A frame as PNG bytes (lossless: the same frame always gives the same image id)."""
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


class _Writer:
    """An MP4 clip written a frame at a time (H x W x 3 uint8, even sides); the container opens
    at the first frame, whose size it takes."""

    def __init__(self, fps: int, codec: str = "libx264") -> None:
        self.fps, self.codec, self.frames = fps, codec, 0
        self.out = io.BytesIO()
        self.container = None
        self.stream = None

    def add(self, array: np.ndarray) -> None:
        import av

        if self.container is None:
            self.container = av.open(self.out, mode="w", format="mp4")
            self.stream = self.container.add_stream(self.codec, rate=self.fps)
            self.stream.height, self.stream.width = array.shape[:2]
            self.stream.pix_fmt = "yuv420p"
            if self.codec == "libx264":  # same bytes on every run and machine: one thread
                self.stream.options = {"preset": "veryfast", "crf": "20", "threads": "1"}
                self.stream.codec_context.thread_count = 1
        frame = av.VideoFrame.from_ndarray(array, format="rgb24")
        for packet in self.stream.encode(frame):
            self.container.mux(packet)
        self.frames += 1

    def close(self) -> bytes:
        if self.container is not None:
            for packet in self.stream.encode():
                self.container.mux(packet)
            self.container.close()
        return self.out.getvalue()


def encode_clip(frames: list[np.ndarray], fps: int = 12, codec: str = "libx264") -> bytes:
    """Frames (H x W x 3 uint8, even sides) as an MP4 clip's bytes, for synthetic clips and tests."""
    writer = _Writer(fps=fps, codec=codec)
    for array in frames:
        writer.add(array)
    return writer.close()
