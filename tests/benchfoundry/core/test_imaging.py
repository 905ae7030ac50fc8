import io

import numpy as np
import pytest
from PIL import Image

from benchfoundry.core import imaging
from benchfoundry.devtools import broken_inputs as faulty


def _encode(image: Image.Image, fmt: str, **kw) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kw)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "BMP", "TIFF", "GIF"])
def test_accepted_formats_decode(fmt, image_bytes):
    info = imaging.inspect(image_bytes((80, 60), fmt=fmt))
    assert (info.width, info.height) == (80, 60)
    assert len(info.phash) == 16


def test_gif_first_frame_is_used():
    frames = [Image.new("RGB", (64, 48), c) for c in ((250, 0, 0), (0, 0, 250))]
    data = _encode(frames[0], "GIF", save_all=True, append_images=frames[1:])
    image = imaging.decode(data)
    assert image.convert("RGB").getpixel((5, 5))[0] > 200
    assert imaging.inspect(data).frames == 2


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "empty_file"),
        (b"hello, this is text", "not_an_image"),
        (faulty.bomb_png(9000, 8000), "too_many_pixels"),
        (_encode(Image.new("RGB", (20, 100)), "PNG"), "too_small"),
        (b"II*\x00" + b"\x00" * 40, "unsupported_format"),
    ],
)
def test_refusals_carry_their_reason(data, reason):
    with pytest.raises(imaging.ImageRejected) as caught:
        imaging.inspect(data)
    assert caught.value.reason == reason
    assert caught.value.detail


def test_truncated_image_is_refused(image_bytes):
    for fmt in ("PNG", "JPEG"):
        data = image_bytes((200, 150), fmt=fmt)
        with pytest.raises(imaging.ImageRejected) as caught:
            imaging.inspect(data[: len(data) // 2])
        assert caught.value.reason in ("truncated_image", "corrupt_image")
    with pytest.raises(imaging.ImageRejected, match="truncated"):
        imaging.inspect(image_bytes((200, 150))[:150])


def test_limits_are_configurable(image_bytes):
    data = image_bytes((100, 80))
    imaging.inspect(data, imaging.ImageLimits(min_side=80))
    with pytest.raises(imaging.ImageRejected):
        imaging.inspect(data, imaging.ImageLimits(min_side=81))
    with pytest.raises(imaging.ImageRejected) as caught:
        imaging.inspect(data, imaging.ImageLimits(max_pixels=7999))
    assert caught.value.reason == "too_many_pixels"


def test_perceptual_hash_sees_near_duplicates(image_bytes):
    original = imaging.inspect(image_bytes((320, 240), seed=3))
    recompressed = imaging.inspect(
        _encode(
            imaging.decode(image_bytes((320, 240), seed=3)).resize((300, 225)), "JPEG", quality=70
        )
    )
    other = imaging.inspect(image_bytes((320, 240), seed=4))
    assert imaging.hamming(original.phash, recompressed.phash) <= 4
    assert imaging.hamming(original.phash, other.phash) > 4
    index, bits = imaging.nearest(
        recompressed.phash, imaging.hashes_array([other.phash, original.phash])
    )
    assert index == 1 and bits <= 4


def _swapped_profile() -> bytes:
    """An RGB profile whose red and blue primaries trade places (its description no longer
    says sRGB): pixels stored red are, by it, blue."""
    import struct

    from PIL import ImageCms

    data = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    entries = {}
    for i in range(struct.unpack(">I", data[128:132])[0]):
        at = 132 + 12 * i
        sig, offset, size = struct.unpack(">4sII", data[at : at + 12])
        entries[sig] = (at, offset, size)
    red, blue = entries[b"rXYZ"], entries[b"bXYZ"]
    struct.pack_into(">4sII", data, red[0], b"rXYZ", blue[1], blue[2])
    struct.pack_into(">4sII", data, blue[0], b"bXYZ", red[1], red[2])
    desc = entries[b"desc"]
    text = bytes(data[desc[1] : desc[1] + desc[2]])
    swapped = text.replace(b"sRGB", b"SWAP").replace(
        "sRGB".encode("utf-16-be"), "SWAP".encode("utf-16-be")
    )
    data[desc[1] : desc[1] + desc[2]] = swapped
    return bytes(data)


def test_an_embedded_colour_profile_is_applied_and_srgb_kept_as_given():
    from PIL import ImageCms

    red = Image.new("RGB", (40, 40), (220, 20, 20))
    out = io.BytesIO()
    red.save(out, format="PNG", icc_profile=_swapped_profile())
    shown = imaging.normalise(out.getvalue())
    pixel = Image.open(io.BytesIO(shown.data)).convert("RGB").getpixel((20, 20))
    assert pixel[2] > 150 and pixel[0] < 80, pixel  # by its profile the stored red is blue
    assert shown.steps[0].startswith("colour profile '") and "converted to sRGB" in shown.steps[0]
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    out = io.BytesIO()
    red.save(out, format="PNG", icc_profile=srgb)
    kept = imaging.normalise(out.getvalue())
    assert kept.steps == () and kept.data == out.getvalue()


def test_float_and_opaque_alpha_pictures():
    grey = Image.fromarray(np.linspace(-2.0, 6.0, 64 * 64, dtype=np.float32).reshape(64, 64))
    out = io.BytesIO()
    grey.save(out, format="TIFF")
    shown = imaging.normalise(out.getvalue())
    values = np.asarray(Image.open(io.BytesIO(shown.data)))
    assert (values.min(), values.max()) == (0, 255)
    assert shown.steps[0] == "floating-point grey stretched to 8 bits"
    opaque = io.BytesIO()
    Image.new("RGBA", (40, 40), (10, 200, 30, 255)).save(opaque, format="PNG")
    assert imaging.normalise(opaque.getvalue()).steps == ()  # read alike everywhere: kept
