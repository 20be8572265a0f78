"""Threads, info(), concurrency from Python threads, threadpoolctl."""

import threading

import numpy as np
import pytest
from conftest import assert_within, fp32_factor, reference

import mmla


@pytest.mark.smoke
def test_info_reports_version_kernels_and_mode():
    d = mmla.info()
    assert d["version"] == mmla.__version__
    assert "gemm_f32_f32p_f32p" in d["kernels"] and d["kernels"]["gemm_f32_f32p_f32p"].startswith("gemm_f32_f32p_f32p_")
    assert "gemm_f32_bf16p_bf16p" in d["kernels"]
    assert d["fpmath"] in ("strict", "bf16")
    assert d["threads"] == mmla.get_num_threads() >= 1
    assert "ref" in d["isa_levels"]


def test_set_num_threads_round_trip():
    default = mmla.get_num_threads()
    try:
        mmla.set_num_threads(1)
        assert mmla.get_num_threads() == 1
    finally:
        mmla.set_num_threads(0)
    assert mmla.get_num_threads() == default


def test_concurrent_calls_from_python_threads():
    rng = np.random.default_rng(7)
    shapes = [(64, 96, 80), (128, 64, 300), (7, 200, 33), (256, 128, 64)]
    work = [(rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)) for m, n, k in shapes]
    errors = []

    def worker(t):
        try:
            for r in range(6):
                a, b = work[(t + r) % len(work)]
                mode = "bf16" if (t + r) % 3 == 0 else None
                with mmla.fpmath("strict"):
                    c = mmla.matmul(a, b, fpmath=mode)
                    assert mmla.get_fpmath_mode() == "strict"  # per-call override does not leak
                if mode is None:
                    value, scale = reference(a, b)
                    bad = np.abs(c - value) > fp32_factor(a.shape[1]) * scale
                    if bad.any():
                        errors.append(f"thread {t}: wrong result")
        except Exception as e:  # reported below, with the thread
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_fpmath_context_is_thread_local():
    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def other():
        inside.wait()
        seen["other"] = mmla.get_fpmath_mode()
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with mmla.fpmath("bf16"):
        inside.set()
        done.wait()
        seen["self"] = mmla.get_fpmath_mode()
    th.join()
    assert seen == {"self": "bf16", "other": "strict"}


def test_gil_is_released_during_compute():
    # While one thread runs a long GEMM, another Python thread keeps running.
    a = np.ones((1024, 1024), np.float32)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    th = threading.Thread(target=ticker)
    th.start()
    try:
        before = len(ticks)
        for _ in range(3):
            mmla.matmul(a, a)
        during = len(ticks) - before
    finally:
        stop.set()
        th.join()
    assert during > 0


def test_threadpoolctl_sees_and_limits_mmla():
    from threadpoolctl import threadpool_info, threadpool_limits

    mine = [d for d in threadpool_info() if d.get("internal_api") == "mmla"]
    assert len(mine) == 1 and mine[0]["user_api"] == "blas"
    assert mine[0]["num_threads"] == mmla.get_num_threads()
    before = mmla.get_num_threads()
    with threadpool_limits(1):
        assert mmla.get_num_threads() == 1
    assert mmla.get_num_threads() == before
    with threadpool_limits(limits=1, user_api="blas"):
        assert mmla.get_num_threads() == 1
