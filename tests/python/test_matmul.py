"""mmla.matmul against float64 NumPy: shapes, strides, transposes, batch broadcasting, dtypes,
alpha/beta; each result within the bound of docs/numerics.md for its k and dtype."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import assert_within, bf16_factor, fastmath_factor, fp32_factor, reference

import mmla

BF16 = ml_dtypes.bfloat16


def rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1, 1, shape).astype(np.float32).astype(dtype)


@pytest.mark.smoke
def test_2d_float32(rng):
    a, b = rand(rng, (37, 129)), rand(rng, (129, 53))
    c = mmla.matmul(a, b)
    assert c.dtype == np.float32 and c.shape == (37, 53)
    assert_within(c, *reference(a, b), fp32_factor(129))


@pytest.mark.smoke
def test_2d_bfloat16(rng):
    a, b = rand(rng, (19, 300), BF16), rand(rng, (300, 41), BF16)
    c = mmla.matmul(a, b)
    assert c.dtype == np.float32
    assert_within(c, *reference(a.astype(np.float32), b.astype(np.float32)), bf16_factor(300))


@pytest.mark.smoke
def test_fast_math_bound_and_restores_mode(rng):
    a, b = rand(rng, (64, 500)), rand(rng, (500, 48))
    before = mmla.get_fpmath_mode()
    with mmla.fpmath("bf16"):
        assert mmla.get_fpmath_mode() == "bf16"
        c = mmla.matmul(a, b)
    assert mmla.get_fpmath_mode() == before
    assert_within(c, *reference(a, b), fastmath_factor(500))
    c2 = mmla.matmul(a, b, fpmath="bf16")
    assert_within(c2, *reference(a, b), fastmath_factor(500))


def test_fpmath_context_nests_and_survives_exceptions():
    with mmla.fpmath("bf16"):
        with mmla.fpmath("strict"):
            assert mmla.get_fpmath_mode() == "strict"
        assert mmla.get_fpmath_mode() == "bf16"
        with pytest.raises(RuntimeError):
            with mmla.fpmath("strict"):
                raise RuntimeError("boom")
        assert mmla.get_fpmath_mode() == "bf16"
    assert mmla.get_fpmath_mode() == "strict"


def test_set_fpmath_mode_process_default(rng):
    try:
        mmla.set_fpmath_mode("bf16")
        assert mmla.get_fpmath_mode() == "bf16"
        with mmla.fpmath("strict"):
            assert mmla.get_fpmath_mode() == "strict"
    finally:
        mmla.set_fpmath_mode("strict")
    assert mmla.get_fpmath_mode() == "strict"


def layout(rng, rows, cols, kind, dtype):
    """A rows x cols operand: row-major, a transposed view, a strided slice, or negative strides."""
    if kind == "row":
        return rand(rng, (rows, cols), dtype)
    if kind == "trans":
        return rand(rng, (cols, rows), dtype).T
    if kind == "slice":
        return rand(rng, (rows * 2, cols + 3), dtype)[::2, 1 : cols + 1]
    return rand(rng, (rows, cols), dtype)[::-1, ::-1]  # negative strides: copied


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 40),
    n=st.integers(1, 40),
    k=st.integers(1, 70),
    la=st.sampled_from(["row", "trans", "slice", "neg"]),
    lb=st.sampled_from(["row", "trans", "slice", "neg"]),
    dtype=st.sampled_from(["f32", "bf16"]),
    alpha=st.sampled_from([1.0, -0.5, 2.0]),
    beta=st.sampled_from([0.0, 1.0, -1.5]),
    seed=st.integers(0, 2**31),
)
def test_property_2d(m, n, k, la, lb, dtype, alpha, beta, seed):
    rng = np.random.default_rng(seed)
    dt = np.float32 if dtype == "f32" else BF16
    a, b = layout(rng, m, k, la, dt), layout(rng, k, n, lb, dt)
    c0 = rand(rng, (m, n))
    out = c0.copy()
    res = mmla.matmul(a, b, out=out, alpha=alpha, beta=beta)
    assert res is out
    factor = fp32_factor(k) if dtype == "f32" else bf16_factor(k)
    assert_within(out, *reference(a.astype(np.float32), b.astype(np.float32), alpha, beta, c0), factor)


@settings(max_examples=40, deadline=None)
@given(
    batch_a=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    batch_b=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    m=st.integers(1, 17),
    n=st.integers(1, 17),
    k=st.integers(1, 33),
    trans_b=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_property_batched_broadcast(batch_a, batch_b, m, n, k, trans_b, seed):
    rng = np.random.default_rng(seed)
    # Make the batch shapes broadcast-compatible: where both have a dim, one of them is 1 or equal.
    nb = min(len(batch_a), len(batch_b))
    for i in range(1, nb + 1):
        if batch_a[-i] != batch_b[-i] and batch_b[-i] != 1:
            batch_a[-i] = 1
    a = rand(rng, tuple(batch_a) + (m, k))
    b = rand(rng, tuple(batch_b) + (n, k)).swapaxes(-1, -2) if trans_b else rand(rng, tuple(batch_b) + (k, n))
    c = mmla.matmul(a, b)
    expected_shape = np.broadcast_shapes(tuple(batch_a), tuple(batch_b)) + (m, n)
    assert c.shape == expected_shape
    assert_within(c, *reference(a, b), fp32_factor(k))


@pytest.mark.smoke
def test_batched_with_shared_weights_is_one_gemm_and_correct(rng):
    # A contiguous batch against one B folds into a single GEMM of batch * m rows.
    x, w = rand(rng, (4, 6, 96)), rand(rng, (96, 80))
    assert_within(mmla.matmul(x, w), *reference(x, w), fp32_factor(96))
    # ... and a non-contiguous batch takes the per-entry path with the same result.
    xs = rand(rng, (4, 12, 96))[:, ::2]
    assert_within(mmla.matmul(xs, w), *reference(xs, w), fp32_factor(96))


def test_out_with_no_unit_stride(rng):
    a, b = rand(rng, (9, 20)), rand(rng, (20, 7))
    big = rand(rng, (18, 14))
    out = big[::2, ::2]
    c0 = out.copy()
    mmla.matmul(a, b, out=out, beta=1.0)
    assert_within(out, *reference(a, b, 1.0, 1.0, c0), fp32_factor(20))
    # elements of `big` between the strided ones are untouched
    assert np.array_equal(big[1::2], np.asarray(big[1::2]))


def test_beta_zero_does_not_read_out(rng):
    a, b = rand(rng, (8, 16)), rand(rng, (16, 8))
    out = np.full((8, 8), np.nan, np.float32)
    mmla.matmul(a, b, out=out)
    assert np.isfinite(out).all()


def test_special_values_propagate():
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 2), np.float32)
    a[1, 2] = np.nan
    a[2, 0] = np.inf
    c = mmla.matmul(a, b)
    assert np.isnan(c[1]).all() and np.isinf(c[2]).all() and (c[0] == 4).all()


@pytest.mark.parametrize("shape_a,shape_b", [((0, 5), (5, 3)), ((4, 5), (5, 0)), ((2, 0, 5), (5, 3)), ((4, 0), (0, 3))])
def test_empty_dimensions_like_numpy(shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    c = mmla.matmul(a, b)
    expected = np.matmul(a, b)
    assert c.shape == expected.shape and np.array_equal(c, expected)


def test_buffer_protocol_input(rng):
    a = rand(rng, (5, 6))
    b = rand(rng, (6, 4))
    c = mmla.matmul(memoryview(a), memoryview(b))
    assert_within(c, *reference(a, b), fp32_factor(6))


def test_read_only_inputs(rng):
    a, b = rand(rng, (5, 6)), rand(rng, (6, 4))
    a.flags.writeable = False
    b.flags.writeable = False
    assert_within(mmla.matmul(a, b), *reference(a, b), fp32_factor(6))


def test_large_k_bound(rng):
    a, b = rand(rng, (16, 3000)), rand(rng, (3000, 24))
    assert_within(mmla.matmul(a, b), *reference(a, b), fp32_factor(3000))
