"""Every misuse raises TypeError or ValueError naming the argument and the reason; none crashes."""

import ml_dtypes
import numpy as np
import pytest

import mmla


def f32(*shape):
    return np.ones(shape, np.float32)


@pytest.mark.smoke
@pytest.mark.parametrize(
    "a,b,match",
    [
        (np.ones((3, 4)), f32(4, 2), "a: dtype float64"),
        (f32(3, 4), np.ones((4, 2), np.int32), "b: dtype int32"),
        (f32(3, 4), f32(4, 2).astype(ml_dtypes.bfloat16), "same dtype"),
        ([[1.0, 2.0]], f32(2, 2), "a: expected"),
    ],
)
def test_dtype_errors(a, b, match):
    with pytest.raises(TypeError, match=match):
        mmla.matmul(a, b)


@pytest.mark.smoke
@pytest.mark.parametrize(
    "a,b,match",
    [
        (f32(4), f32(4, 2), "a: needs at least 2 dimensions, got 1-D"),
        (f32(3, 4), f32(4), "b: needs at least 2 dimensions"),
        (np.float32(1.0) * f32(), f32(1, 1), "a: needs at least 2 dimensions, got 0-D"),
        (f32(3, 4), f32(5, 2), "inner dimensions differ"),
        (f32(2, 3, 4), f32(3, 4, 2), "do not broadcast"),
    ],
)
def test_shape_errors(a, b, match):
    with pytest.raises(ValueError, match=match):
        mmla.matmul(a, b)


@pytest.mark.smoke
def test_out_errors():
    a, b = f32(3, 4), f32(4, 2)
    with pytest.raises(ValueError, match="out: shape must be"):
        mmla.matmul(a, b, out=f32(2, 3))
    with pytest.raises(TypeError, match="out: dtype must be float32"):
        mmla.matmul(a, b, out=np.zeros((3, 2)))
    ro = f32(3, 2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out: array is read-only"):
        mmla.matmul(a, b, out=ro)
    sq = f32(4, 4)
    with pytest.raises(ValueError, match="out: overlaps a"):
        mmla.matmul(sq, f32(4, 4), out=sq)
    buf = f32(4, 8)
    with pytest.raises(ValueError, match="out: overlaps b"):
        mmla.matmul(f32(4, 4), buf[:, :4], out=buf[:, 4:])
    with pytest.raises(TypeError, match="out: expected"):
        mmla.matmul(a, b, out=[[0.0, 0.0]] * 3)
    with pytest.raises(ValueError, match="beta: a nonzero beta needs `out`"):
        mmla.matmul(a, b, beta=0.5)


def test_argument_errors():
    a, b = f32(3, 4), f32(4, 2)
    with pytest.raises(ValueError, match="fpmath"):
        mmla.matmul(a, b, fpmath="fast")
    with pytest.raises(TypeError, match="alpha and beta"):
        mmla.matmul(a, b, alpha="x")
    with pytest.raises(ValueError):
        mmla.set_num_threads(-1)
    with pytest.raises(TypeError):
        mmla.set_num_threads(1.5)
    with pytest.raises(ValueError):
        mmla.set_fpmath_mode("fast")
    with pytest.raises(ValueError):
        with mmla.fpmath("nope"):
            pass


class FakeDevice:
    """A DLPack producer on a non-CPU device (kDLCUDA = 2)."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("must not be imported")


@pytest.mark.smoke
def test_non_cpu_dlpack_device():
    with pytest.raises(ValueError, match="a: DLPack device .* is not CPU memory"):
        mmla.matmul(FakeDevice(), f32(2, 2))
