"""PyTorch interop through DLPack: zero copies (checked by data pointer), bf16, out, devices."""

import numpy as np
import pytest
from conftest import assert_within, bf16_factor, fp32_factor, reference

import mmla

torch = pytest.importorskip("torch", reason="torch is installed by scripts/python-venv.sh")


def test_float32_tensors_zero_copy_in_and_out():
    a, b = torch.rand(33, 65), torch.rand(65, 17)
    out = torch.empty(33, 17)
    ptr = out.data_ptr()
    res = mmla.matmul(a, b, out=out)
    assert res is out and out.data_ptr() == ptr
    assert_within(out.numpy(), *reference(a.numpy(), b.numpy()), fp32_factor(65))
    # inputs are read where they are: a transposed view is not copied by _as_array
    from mmla._core import _as_array

    at = torch.rand(65, 33).t()
    arr, kind = _as_array(at, "a")
    assert kind == "f32" and arr.ctypes.data == at.data_ptr() and arr.strides == (4, 33 * 4)


def test_returns_tensor_for_tensor_inputs():
    a, b = torch.rand(4, 8), torch.rand(8, 3)
    c = mmla.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.shape == (4, 3)
    assert_within(c.numpy(), *reference(a.numpy(), b.numpy()), fp32_factor(8))


def test_bfloat16_tensors_zero_copy():
    a, b = torch.rand(20, 50).bfloat16(), torch.rand(50, 10).bfloat16()
    from mmla._core import _as_array

    arr, kind = _as_array(a, "a")
    assert kind == "bf16" and arr.ctypes.data == a.data_ptr()
    c = mmla.matmul(a, b)
    assert_within(c.numpy(), *reference(a.float().numpy(), b.float().numpy()), bf16_factor(50))


def test_batched_tensors_and_requires_grad_inputs():
    x = torch.rand(3, 5, 16, requires_grad=True)
    w = torch.rand(16, 8)
    c = mmla.matmul(x, w)
    assert_within(c.numpy(), *reference(x.detach().numpy(), w.numpy()), fp32_factor(16))


def test_tensor_errors():
    with pytest.raises(TypeError, match="a: dtype torch.float64"):
        mmla.matmul(torch.rand(2, 2, dtype=torch.float64), torch.rand(2, 2))
    with pytest.raises(ValueError, match="a: tensor is on device 'meta'"):
        mmla.matmul(torch.empty(2, 2, device="meta"), torch.rand(2, 2))
    with pytest.raises(TypeError, match="out: dtype must be float32"):
        mmla.matmul(torch.rand(2, 2), torch.rand(2, 2), out=torch.empty(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="out: a tensor that requires grad"):
        mmla.matmul(torch.rand(2, 2), torch.rand(2, 2), out=torch.empty(2, 2, requires_grad=True))
    a = torch.rand(4, 4)
    with pytest.raises(ValueError, match="out: overlaps a"):
        mmla.matmul(a, torch.rand(4, 4), out=a)
