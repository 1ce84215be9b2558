"""vision.fast_stats: the histogram medians and table distances equal numpy's float results bit for bit."""

import numpy as np
import pytest

from vision.fast_stats import channel_medians_u8, colour_distance_u8, colour_sq_distance_u8, least_channel, share_set


@pytest.mark.parametrize("seed", range(4))
def test_channel_medians_equal_numpy(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        h, w = rng.integers(1, 40, 2)
        low = int(rng.integers(0, 250))
        image = rng.integers(low, low + int(rng.integers(1, 6)), (h, w, 3), dtype=np.uint8)  # many ties
        mask = rng.random((h, w)) < rng.random()
        want = np.median(image[mask], axis=0) if mask.any() else np.full(3, np.nan)
        got = channel_medians_u8(image, mask)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(channel_medians_u8(image), np.median(image.reshape(-1, 3), axis=0))


def test_channel_medians_average_the_two_middle_values():
    image = np.array([[[10, 0, 7], [13, 255, 8]]], np.uint8)
    np.testing.assert_array_equal(channel_medians_u8(image), [11.5, 127.5, 7.5])


@pytest.mark.parametrize("seed", range(3))
def test_colour_distance_equals_float_arithmetic(seed):
    rng = np.random.default_rng(seed)
    for _ in range(30):
        image = rng.integers(0, 256, (*rng.integers(1, 50, 2), 3), dtype=np.uint8)
        colour = rng.integers(0, 511, 3) / 2.0  # a median: whole or half units
        d = image.astype(np.float32) - colour.astype(np.float32)
        want = np.sqrt((d * d).sum(axis=2))
        got = colour_distance_u8(image, colour)
        assert got.dtype == np.float32 and got.shape == image.shape[:2]
        np.testing.assert_array_equal(got, want)


def test_least_channel_equals_numpy_min():
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (31, 17, 3), dtype=np.uint8)
    for part in (image, image[3:20, 2:9], image[::2, ::3]):
        got = least_channel(part)
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, part.min(axis=2))


def test_colour_sq_distance_is_the_square_before_the_root():
    rng = np.random.default_rng(6)
    image = rng.integers(0, 256, (9, 11, 3), dtype=np.uint8)
    colour = np.array([12.0, 200.5, 128.0])
    d = image.astype(np.float32) - colour.astype(np.float32)
    np.testing.assert_array_equal(colour_sq_distance_u8(image, colour), (d * d).sum(axis=2))


def test_share_set_equals_mean():
    rng = np.random.default_rng(7)
    for shape in ((0,), (1,), (7, 3), (64, 61)):
        mask = rng.random(shape) < 0.37
        for m in (mask, mask.astype(np.uint8)):
            got = share_set(m)
            if m.size:
                assert got == float(m.mean())
            else:
                assert np.isnan(got)
