"""`mmla bench`: GFLOPS of mmla (fp32 strict, fp32 fast math, bf16) beside NumPy's matmul (and
PyTorch's, if it is installed), interleaved in one run, with each result's error against a float64
reference. A benchmark, not a test: it asserts nothing."""

import json
import statistics
import sys
import time

import numpy as np

DEFAULT_SHAPES = [
    (256, 256, 256),
    (512, 512, 512),
    (1024, 1024, 1024),
    (1, 768, 768),
    (8, 768, 768),
    (32, 768, 3072),
    (128, 3072, 768),
    (512, 768, 768),
]
QUICK_SHAPES = [(128, 128, 128), (256, 256, 256), (8, 768, 768), (32, 768, 768)]


def add_arguments(p):
    p.add_argument("--shapes", help="comma-separated MxNxK list, e.g. 8x768x768,1024x1024x1024")
    p.add_argument("--quick", action="store_true", help="a few small shapes, short timing")
    p.add_argument("--min-time", type=float, default=None, help="seconds of timed calls per shape and column")
    p.add_argument("--reps", type=int, default=5, help="at least this many timed calls (default 5)")
    p.add_argument("--settle", type=float, default=0.12, help="seconds of sleep after each column's turn (default 0.12)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--plot", metavar="FILE.png", help="draw GFLOPS per shape per column (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _parse_shapes(text):
    shapes = []
    for item in text.split(","):
        try:
            m, n, k = (int(v) for v in item.strip().lower().split("x"))
        except ValueError:
            raise SystemExit(f"mmla bench: --shapes: '{item}' is not MxNxK") from None
        if min(m, n, k) < 1:
            raise SystemExit(f"mmla bench: --shapes: '{item}' has a size < 1")
        shapes.append((m, n, k))
    return shapes


class _Progress:
    def __init__(self, total, enabled):
        self.total, self.done, self.enabled = total, 0, enabled and total > 0
        self.t0 = time.perf_counter()

    def step(self, label):
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // self.total
        elapsed = time.perf_counter() - self.t0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label:<28} {elapsed:5.1f}s")
        sys.stderr.flush()
        if self.done == self.total:
            sys.stderr.write("\n")


def _columns(mmla):
    """(name, prepare(a32, b32) -> (call, c_of_result)) for every column this machine has."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    cols = []

    def mmla_f32(a, b):
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: mmla.matmul(a, b, out=out, fpmath="strict"), lambda: out

    def mmla_fast(a, b):
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: mmla.matmul(a, b, out=out, fpmath="bf16"), lambda: out

    def mmla_bf16(a, b):
        ab, bb = a.astype(bf16), b.astype(bf16)
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: mmla.matmul(ab, bb, out=out), lambda: out

    def numpy_f32(a, b):
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        return lambda: np.matmul(a, b, out=out), lambda: out

    cols += [("mmla", mmla_f32), ("mmla:fast", mmla_fast), ("mmla:bf16", mmla_bf16), ("numpy", numpy_f32)]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:

        def torch_f32(a, b):
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            out = torch.empty(a.shape[0], b.shape[1])
            return lambda: torch.matmul(ta, tb, out=out), lambda: out.numpy()

        def torch_bf16(a, b):
            ta, tb = torch.from_numpy(a).bfloat16(), torch.from_numpy(b).bfloat16()
            res = {}

            def call():
                res["c"] = torch.matmul(ta, tb)

            return call, lambda: res["c"].float().numpy()

        cols += [("torch", torch_f32), ("torch:bf16", torch_bf16)]
    return cols


def _max_rel_err(c, a64, b64, ref):
    # Error of each element relative to its own scale sum_p |a_ip| |b_pj| (robust where c ~ 0).
    scale = np.abs(a64) @ np.abs(b64)
    return float(np.max(np.abs(c.astype(np.float64) - ref) / np.maximum(scale, np.finfo(np.float64).tiny)))


def run(args):
    import mmla

    shapes = _parse_shapes(args.shapes) if args.shapes else (QUICK_SHAPES if args.quick else DEFAULT_SHAPES)
    min_time = args.min_time if args.min_time is not None else (0.05 if args.quick else 0.3)
    cols = _columns(mmla)
    rng = np.random.default_rng(1)
    progress = _Progress(len(shapes) * len(cols), not args.no_progress)
    results = []
    for m, n, k in shapes:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ref = a64 @ b64
        prepared = [(name, *prep(a, b)) for name, prep in cols]
        times = {name: [] for name, _, _ in prepared}
        errs = {}
        for name, call, result in prepared:  # warm-up and accuracy
            call()
            errs[name] = _max_rel_err(result(), a64, b64, ref)
        # Rounds of bursts: each column in turn makes one untimed call and then its timed calls,
        # then sleeps `settle` so the worker threads of the library that ran (OpenBLAS spins for
        # ~0.1 s, OpenMP for ~1 ms) stop competing for the cores with the next one. Several rounds
        # spread a shared machine's drifts over every column.
        rounds = 3
        for rnd in range(rounds):
            for name, call, _result in prepared:
                call()
                spent = 0.0
                while len(times[name]) * rounds < args.reps * (rnd + 1) or spent < min_time / rounds:
                    t0 = time.perf_counter()
                    call()
                    dt = time.perf_counter() - t0
                    times[name].append(dt)
                    spent += dt
                time.sleep(args.settle)
        flops = 2.0 * m * n * k
        row = {"m": m, "n": n, "k": k, "libs": {}}
        for name in times:
            med = statistics.median(times[name])
            row["libs"][name] = {"gflops": flops / med * 1e-9, "median_s": med, "reps": len(times[name]),
                                 "max_rel_err": errs[name]}
            progress.step(f"{m}x{n}x{k} {name}")
        results.append(row)

    names = [name for name, _ in cols]
    print(f"mmla {mmla.__version__}; kernels: " + ", ".join(f"{v}" for v in mmla.info()["kernels"].values()))
    print(f"threads: mmla {mmla.get_num_threads()}; GFLOPS (median), error = max |c - c64| / (|a||b|)")
    header = f"{'shape':<16}" + "".join(f"{n:>12}" for n in names) + f"{'mmla/numpy':>12}{'fast/strict':>12}"
    print(header)
    for r in results:
        libs = r["libs"]
        line = f"{r['m']}x{r['n']}x{r['k']:<{16 - len(str(r['m'])) - len(str(r['n'])) - 2}}"
        line += "".join(f"{libs[n]['gflops']:12.1f}" for n in names)
        line += f"{libs['mmla']['gflops'] / libs['numpy']['gflops']:12.2f}"
        line += f"{libs['mmla:fast']['gflops'] / libs['mmla']['gflops']:12.2f}"
        print(line)
    print(f"{'error':<16}" + "".join(f"{max(r['libs'][n]['max_rel_err'] for r in results):12.1e}" for n in names))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"version": mmla.__version__, "info": mmla.info(), "results": results}, f, indent=1)
    if args.plot:
        _plot(results, names, args.plot)
    return 0


def _plot(results, names, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("mmla bench: --plot needs matplotlib (pip install matplotlib)") from None
    labels = [f"{r['m']}x{r['n']}x{r['k']}" for r in results]
    x = np.arange(len(results))
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(results)), 4))
    for i, name in enumerate(names):
        ax.bar(x + i * width, [r["libs"][name]["gflops"] for r in results], width, label=name)
    ax.set_xticks(x + 0.4 - width / 2, labels, rotation=30, ha="right")
    ax.set_ylabel("GFLOPS")
    ax.set_title("mmla bench")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
