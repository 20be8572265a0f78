"""mmla.PackedMatrix: weights packed once, multiplied by many a (2-D and batched, float32 and
bfloat16, transposed weights, alpha/beta into out) against float64 NumPy; and its errors."""

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_within, bf16_factor, fastmath_factor, fp32_factor, reference

import mmla

BF16 = ml_dtypes.bfloat16


def rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1, 1, shape).astype(np.float32).astype(dtype)


def bf16_hardware():
    return not mmla.info()["kernels"]["gemm_f32_bf16p_bf16p"].endswith("__ref")


@pytest.mark.smoke
@pytest.mark.parametrize("a_shape", [(1, 300), (37, 300), (2, 5, 300)])
def test_float32_weights(rng, a_shape):
    w = rand(rng, (300, 70))
    packed = mmla.PackedMatrix(w)
    assert packed.shape == (300, 70) and packed.dtype == "float32" and packed.nbytes >= 300 * 70 * 2
    a = rand(rng, a_shape)
    c = mmla.matmul(a, packed)
    assert c.dtype == np.float32 and c.shape == a_shape[:-1] + (70,)
    assert_within(c, *reference(a, w), fp32_factor(300))
    c2 = mmla.matmul(rand(rng, (3, 300)), packed)  # reusable
    assert c2.shape == (3, 70)


def test_transposed_weights_and_strided_a(rng):
    w_t = rand(rng, (90, 200))  # a layer's W (n x k), used as W^T
    packed = mmla.PackedMatrix(w_t.T)
    a_big = rand(rng, (40, 260))
    a = a_big[::2, 10:210]  # rows two apart
    assert_within(mmla.matmul(a, packed), *reference(a, w_t.T), fp32_factor(200))
    a_t = np.asfortranarray(rand(rng, (12, 200)))  # column-major a
    assert_within(mmla.matmul(a_t, packed), *reference(a_t, w_t.T), fp32_factor(200))


@pytest.mark.smoke
def test_bfloat16_weights_with_either_activation(rng):
    w = rand(rng, (250, 64), BF16)
    packed = mmla.PackedMatrix(w)
    assert packed.dtype == "bfloat16"
    w32 = w.astype(np.float32)
    a16 = rand(rng, (9, 250), BF16)
    assert_within(mmla.matmul(a16, packed), *reference(a16.astype(np.float32), w32), bf16_factor(250))
    a32 = rand(rng, (9, 250))
    # fp32 a is rounded to bf16 where the bf16 kernel runs.
    assert_within(mmla.matmul(a32, packed), *reference(a32, w32), fastmath_factor(250))


def test_alpha_beta_into_strided_out(rng):
    w = rand(rng, (128, 48))
    packed = mmla.PackedMatrix(w)
    a = rand(rng, (20, 128))
    for out in (rand(rng, (20, 48)), np.asfortranarray(rand(rng, (20, 48))), rand(rng, (20, 96))[:, ::2]):
        c0 = out.copy()
        got = mmla.matmul(a, packed, out=out, alpha=0.5, beta=-2.0)
        assert got is out
        assert_within(out, *reference(a, w, 0.5, -2.0, c0), fp32_factor(128))


def test_fast_math_packing(rng):
    w, a = rand(rng, (300, 40)), rand(rng, (16, 300))
    packed = mmla.PackedMatrix(w, fpmath="bf16")
    assert_within(mmla.matmul(a, packed, fpmath="bf16"), *reference(a, w), fastmath_factor(300))
    if bf16_hardware():
        # Packed for the bf16 kernel: a strict call would need the fp32 one.
        with pytest.raises(ValueError, match="packed for kernel"):
            mmla.matmul(a, packed, fpmath="strict")


def test_errors(rng):
    w = rand(rng, (30, 20))
    packed = mmla.PackedMatrix(w)
    with pytest.raises(ValueError, match="inner dimensions"):
        mmla.matmul(rand(rng, (4, 31)), packed)
    with pytest.raises(ValueError, match="2-D"):
        mmla.PackedMatrix(rand(rng, (2, 30, 20)))
    with pytest.raises(TypeError, match="not supported"):
        mmla.PackedMatrix(w.astype(np.float64))
    with pytest.raises(TypeError, match="not supported"):
        mmla.matmul(rand(rng, (4, 30)).astype(np.float64), packed)
    with pytest.raises(ValueError, match="beta"):
        mmla.matmul(rand(rng, (4, 30)), packed, beta=1.0)
    with pytest.raises(ValueError, match="shape"):
        mmla.matmul(rand(rng, (4, 30)), packed, out=np.zeros((4, 21), np.float32))
    with pytest.raises(ValueError, match="1-D"):
        mmla.matmul(rand(rng, (30,)), packed)
    with pytest.raises(ValueError, match="fpmath"):
        mmla.PackedMatrix(w, fpmath="fast")


def test_torch_activations(rng):
    torch = pytest.importorskip("torch")
    w = rand(rng, (64, 32))
    packed = mmla.PackedMatrix(torch.from_numpy(w))
    a = torch.from_numpy(rand(rng, (5, 64)))
    c = mmla.matmul(a, packed)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32
    assert_within(c.numpy(), *reference(a.numpy(), w), fp32_factor(64))
