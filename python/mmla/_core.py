"""matmul and the controls: argument checking and layout mapping only; the math is in C++."""

import contextlib

import numpy as np

from . import _mmla

try:  # bfloat16 arrays from NumPy need ml_dtypes; without it only float32 (and torch bf16) work
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    _BF16 = None

_MODES = {"strict": _mmla.FPMATH_STRICT, "bf16": _mmla.FPMATH_BF16}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_DLPACK_CPU = 1  # kDLCPU


def _torch_module(x):
    mod = type(x).__module__
    if mod.startswith("torch"):
        import torch

        if isinstance(x, torch.Tensor):
            return torch
    return None


def _as_array(x, name):
    """A NumPy view of x (no copy where x's memory can be shared) and its kind, 'f32' or 'bf16'."""
    torch = _torch_module(x)
    if torch is not None:
        if x.device.type != "cpu":
            raise ValueError(f"{name}: tensor is on device '{x.device}'; mmla computes on the CPU only")
        t = x.detach()
        if t.dtype == torch.float32:
            return np.from_dlpack(t), "f32"
        if t.dtype == torch.bfloat16:
            return np.from_dlpack(t.view(torch.int16)).view(np.uint16), "bf16"
        raise TypeError(f"{name}: dtype {t.dtype} is not supported (float32 or bfloat16; mmla does not cast)")
    if isinstance(x, np.ndarray):
        arr = x
    elif hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dev = x.__dlpack_device__()
        if int(dev[0]) != _DLPACK_CPU:
            raise ValueError(f"{name}: DLPack device {tuple(dev)} is not CPU memory; mmla computes on the CPU only")
        try:
            arr = np.from_dlpack(x)
        except (TypeError, BufferError) as e:
            raise TypeError(f"{name}: cannot import through DLPack: {e}") from None
    else:
        try:
            arr = np.asarray(memoryview(x))
        except TypeError:
            raise TypeError(
                f"{name}: expected a NumPy array, a tensor (DLPack) or a buffer, got {type(x).__name__}"
            ) from None
    if arr.dtype == np.float32:
        return arr, "f32"
    if _BF16 is not None and arr.dtype == _BF16:
        return arr.view(np.uint16), "bf16"
    raise TypeError(f"{name}: dtype {arr.dtype} is not supported (float32 or bfloat16; mmla does not cast)")


def _usable_strides(arr):
    """Whether mmla can read arr's last two dims in place: positive strides, whole elements."""
    item = arr.itemsize
    for s, extent in zip(arr.strides[-2:], arr.shape[-2:]):
        if extent > 1 and (s <= 0 or s % item):
            return False
    return all(s % item == 0 for s in arr.strides)


def _fpmath_code(fpmath):
    if fpmath is None:
        return -1
    try:
        return _MODES[fpmath]
    except (KeyError, TypeError):
        raise ValueError(f"fpmath: expected 'strict', 'bf16' or None, got {fpmath!r}") from None


def _unit_stride_2d(arr):
    """Whether a 2-D (or last-two-dims) view has a unit stride in one of them (as BLAS operands need)."""
    if not _usable_strides(arr):
        return False
    item = arr.itemsize
    (rows, cols), (rs, cs) = arr.shape[-2:], arr.strides[-2:]
    return cols <= 1 or cs == item or rows <= 1 or rs == item


def _scalars_and_out(alpha, beta, out, shape, inputs, torch):
    """alpha and beta as floats, the float32 array written (out's, or a new one) and what is returned."""
    try:
        alpha, beta = float(alpha), float(beta)
    except (TypeError, ValueError):
        raise TypeError("alpha and beta must be real numbers") from None
    if out is None:
        if beta != 0.0:
            raise ValueError("beta: a nonzero beta needs `out` (there is no C to scale)")
        O = np.empty(shape, np.float32)
        return alpha, beta, O, (torch.from_numpy(O) if torch is not None else O)
    return alpha, beta, _check_out(out, shape, inputs), out


class PackedMatrix:
    """Weights b (k x n, 2-D, float32 or bfloat16) packed once into the layout of the kernel mmla
    picked for this CPU, for many `mmla.matmul(a, w)` calls with different a: inference's case, where
    repacking the weights on every call would cost time. bfloat16 weights stay bfloat16 where the CPU
    has bf16 instructions (half the bytes per call). The kernel is fixed when packing: under
    fast math (fpmath='bf16', or the mode in force) float32 weights are packed for the bf16 kernel,
    and a later call under another mode is refused (ValueError), never misread. The packed copy
    is independent of b."""

    def __init__(self, b, *, fpmath=None):
        mode = _fpmath_code(fpmath)
        B, kind = _as_array(b, "b")
        if B.ndim != 2:
            raise ValueError(f"b: packed weights must be 2-D, got {B.ndim}-D")
        if not _unit_stride_2d(B):
            B = np.ascontiguousarray(B)
        self._handle = _mmla.Packed(B, kind == "bf16", mode)
        self.shape = (int(B.shape[0]), int(B.shape[1]))
        self.dtype = "bfloat16" if kind == "bf16" else "float32"

    @property
    def nbytes(self):
        """Bytes the packed data occupies."""
        return self._handle.nbytes

    def __repr__(self):
        return f"mmla.PackedMatrix(shape={self.shape}, dtype={self.dtype}, nbytes={self.nbytes})"


def _matmul_packed(a, w, out, alpha, beta, mode):
    torch = _torch_module(a)
    A, kind = _as_array(a, "a")
    if A.ndim < 2:
        raise ValueError(f"a: needs at least 2 dimensions, got {A.ndim}-D (1-D vectors are not promoted)")
    m, k = A.shape[-2:]
    k2, n = w.shape
    if k != k2:
        raise ValueError(f"a and b: inner dimensions differ: a is {A.shape}, b is packed {w.shape} ({k} != {k2})")
    shape = tuple(A.shape[:-2]) + (m, n)
    alpha, beta, O, result = _scalars_and_out(alpha, beta, out, shape, (A,), torch)
    if not _unit_stride_2d(A):
        A = np.ascontiguousarray(A)
    # out's rows must be contiguous (a row-major C); otherwise compute in a compact copy.
    rows_ok = _usable_strides(O) and (n <= 1 or O.strides[-1] == 4)
    work = O if rows_ok else (np.ascontiguousarray(O) if beta != 0.0 else np.empty(shape, np.float32))
    _mmla.gemm_packed(A, w._handle, work, alpha, beta, kind == "bf16", mode)
    if work is not O:
        O[...] = work
    return result


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, fpmath=None):
    """out = alpha * (a @ b) + beta * out, with numpy.matmul's shape rules for 2-D and batched (>= 3-D,
    broadcast) operands. a and b: float32 or bfloat16 (both the same), NumPy arrays, torch tensors
    (DLPack) or buffers; or b a PackedMatrix (weights packed once), which a of either dtype, 2-D or
    batched, multiplies. The result is float32: a new NumPy array (a torch tensor if an input is
    one), or `out`. fpmath: None (the mode in force), 'strict' or 'bf16' for this call only."""
    mode = _fpmath_code(fpmath)
    if isinstance(b, PackedMatrix):
        return _matmul_packed(a, b, out, alpha, beta, mode)
    torch = _torch_module(a) or _torch_module(b)
    A, kind_a = _as_array(a, "a")
    B, kind_b = _as_array(b, "b")
    if kind_a != kind_b:
        raise TypeError(f"a and b must have the same dtype, got {kind_a} and {kind_b} (mmla does not cast)")
    for name, arr in (("a", A), ("b", B)):
        if arr.ndim < 2:
            raise ValueError(f"{name}: needs at least 2 dimensions, got {arr.ndim}-D (1-D vectors are not promoted)")
    m, k = A.shape[-2:]
    k2, n = B.shape[-2:]
    if k != k2:
        raise ValueError(f"a and b: inner dimensions differ: a is {A.shape}, b is {B.shape} ({k} != {k2})")
    try:
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise ValueError(f"a and b: batch dimensions {A.shape[:-2]} and {B.shape[:-2]} do not broadcast") from None
    shape = tuple(batch) + (m, n)
    alpha, beta, O, result = _scalars_and_out(alpha, beta, out, shape, (A, B), torch)

    A = np.broadcast_to(A if _usable_strides(A) else np.ascontiguousarray(A), tuple(batch) + (m, k))
    B = np.broadcast_to(B if _usable_strides(B) else np.ascontiguousarray(B), tuple(batch) + (k, n))
    # C needs a unit stride in one of its two dims; otherwise compute in a compact copy.
    unit = O.ndim >= 2 and (O.strides[-1] == 4 or O.strides[-2] == 4 or n <= 1 or m <= 1)
    work = O if unit and _usable_strides(O) else (np.ascontiguousarray(O) if beta != 0.0 else np.empty(shape, np.float32))
    _mmla.gemm(A, B, work, alpha, beta, kind_a == "bf16", mode)
    if work is not O:
        O[...] = work
    return result


def _check_out(out, shape, inputs):
    torch = _torch_module(out)
    if torch is not None:
        if out.device.type != "cpu":
            raise ValueError(f"out: tensor is on device '{out.device}'; mmla computes on the CPU only")
        if out.dtype != torch.float32:
            raise TypeError(f"out: dtype must be float32, got {out.dtype}")
        if out.requires_grad:
            raise ValueError("out: a tensor that requires grad cannot be written in place")
        O = np.from_dlpack(out.detach())
    elif isinstance(out, np.ndarray):
        O = out
    else:
        raise TypeError(f"out: expected a NumPy array or a torch tensor, got {type(out).__name__}")
    if O.dtype != np.float32:
        raise TypeError(f"out: dtype must be float32, got {O.dtype}")
    if tuple(O.shape) != tuple(shape):
        raise ValueError(f"out: shape must be {tuple(shape)}, got {tuple(O.shape)}")
    if not O.flags.writeable:
        raise ValueError("out: array is read-only")
    for name, arr in zip(("a", "b"), inputs):
        if np.may_share_memory(O, arr):
            raise ValueError(f"out: overlaps {name} in memory (mmla would read what it writes)")
    return O


def set_num_threads(n):
    """Threads per call: n >= 1, or 0 for the default (the CPUs this process may use)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n: expected an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n: must be >= 0 (0 restores the default), got {n}")
    _mmla.set_num_threads(n)


def get_num_threads():
    """The number of threads a call would use now."""
    return _mmla.get_num_threads()


def set_fpmath_mode(mode):
    """The process-wide fp32 math mode: 'strict' (default) or 'bf16' (fast math)."""
    code = _fpmath_code(mode)
    if code < 0:
        raise ValueError("mode: expected 'strict' or 'bf16'")
    _mmla.set_fpmath_mode(code)


def get_fpmath_mode():
    """The fp32 math mode in force on this thread: 'strict' or 'bf16'."""
    return _MODE_NAMES[_mmla.get_fpmath_mode()]




@contextlib.contextmanager
def fpmath(mode):
    """`with mmla.fpmath('bf16'):` sets this thread's fp32 math mode inside the block and restores
    the previous one after it (also on exceptions; blocks nest)."""
    code = _fpmath_code(mode)
    if code < 0:
        raise ValueError("mode: expected 'strict' or 'bf16'")
    prev = _mmla.get_thread_fpmath_mode()
    _mmla.set_thread_fpmath_mode(code)
    try:
        yield
    finally:
        _mmla.set_thread_fpmath_mode(prev)


def config():
    """mmla_get_config()'s report as text."""
    return _mmla.config()


def info():
    """A dict: version, cpu, features, caches, isa_levels, kernels (family -> kernel), threads,
    fpmath, and the whole report as 'config'."""
    text = _mmla.config()
    d = {
        "version": _mmla.version(),
        "cpu": "",
        "features": [],
        "caches": "",
        "isa_levels": [],
        "kernels": {},
        "threads": _mmla.get_num_threads(),
        "fpmath": get_fpmath_mode(),
        "config": text,
    }
    for line in text.splitlines():
        if line.startswith("cpu: "):
            d["cpu"] = line[5:].strip()
        elif line.startswith("features: "):
            d["features"] = line[10:].split()
        elif line.startswith("caches: "):
            d["caches"] = line[8:].strip()
        elif line.startswith("isa levels detected: "):
            d["isa_levels"] = line[len("isa levels detected: ") :].split()
        elif line.startswith("kernel "):
            family, _, rest = line[len("kernel ") :].partition(": ")
            d["kernels"][family] = rest.split(" ")[0]
    return d
