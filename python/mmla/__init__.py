"""mmla: fast matrix math for deep-learning inference on CPUs.

mmla.matmul(a, b) multiplies float32 or bfloat16 matrices (NumPy, PyTorch, any buffer) with
numpy.matmul's shape rules and returns float32; `with mmla.fpmath("bf16"):` runs fp32 inputs at
bf16 speed where the CPU has bf16 instructions; mmla.PackedMatrix(w) packs weights once for many
matmul(x, w) calls. See mmla.info() for what this CPU gets.
"""

from ._core import (
    PackedMatrix,
    config,
    fpmath,
    get_fpmath_mode,
    get_num_threads,
    info,
    matmul,
    set_fpmath_mode,
    set_num_threads,
)
from ._mmla import version as _version

__version__ = _version()
__all__ = [
    "PackedMatrix",
    "__version__",
    "config",
    "fpmath",
    "get_fpmath_mode",
    "get_num_threads",
    "info",
    "matmul",
    "set_fpmath_mode",
    "set_num_threads",
]

from . import _threadpoolctl  # noqa: E402,F401  (registers mmla with threadpoolctl if it is installed)
