"""Shared helpers: the float64 reference and the error bounds of docs/numerics.md."""

import math

import numpy as np
import pytest

U32 = 2.0**-24  # fp32 unit roundoff
U_BF16 = 2.0**-8  # bf16 unit roundoff (rounding fp32 inputs in fast math)
MIN_KC = 32  # the smallest K block the driver uses (docs/blocking.md): the most roundings


def reference(a, b, alpha=1.0, beta=0.0, c0=None):
    """float64 alpha * a @ b + beta * c0 and, per element, the scale of its rounding error."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    value = alpha * np.matmul(a64, b64)
    scale = abs(alpha) * np.matmul(np.abs(a64), np.abs(b64))
    if beta != 0.0:
        c64 = np.asarray(c0, np.float64)
        value = value + beta * c64
        scale = scale + np.abs(beta * c64)
    return value, scale


def fp32_factor(k, extra_roundings=0):
    # k roundings of the dot product, two per K block (alpha, the add into C), two for beta, and a
    # few more where threads split K and add their partial sums.
    blocks = max(1, math.ceil(k / MIN_KC))
    return 1.01 * (k + 2 * blocks + 2 + 4 + extra_roundings) * U32


def bf16_factor(k):
    # bf16 x bf16 products are exact in fp32; the BF16 instructions may round twice per depth step.
    return fp32_factor(2 * k)


def fastmath_factor(k):
    return (1 + U_BF16) ** 2 - 1 + bf16_factor(k)


def assert_within(got, value, scale, factor):
    got64 = np.asarray(got, np.float64)
    err = np.abs(got64 - value)
    allowed = factor * scale
    bad = ~(err <= allowed)  # NaN counts as bad
    if bad.any():
        idx = tuple(int(i[0]) for i in np.nonzero(bad))
        pytest.fail(f"element {idx}: got {got64[idx]}, expected {value[idx]} (error {err[idx]} > bound {allowed[idx]})")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
