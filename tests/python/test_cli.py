"""The `mmla` command: info, and bench with --json and --plot."""

import json
import os
import shlex
import subprocess
import sys

import pytest


# Under qemu-user (the aarch64 wheel test) sys.executable is an aarch64 binary the host cannot exec;
# MMLA_TEST_PYTHON names the command that runs it.
PYTHON = shlex.split(os.environ.get("MMLA_TEST_PYTHON", "")) or [sys.executable]


def run(*args):
    return subprocess.run([*PYTHON, "-m", "mmla", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.smoke
def test_info():
    r = run("info")
    assert r.returncode == 0, r.stderr
    assert "kernel gemm_f32_f32p_f32p:" in r.stdout and "fp-math mode" in r.stdout and "threads per call" in r.stdout


def test_bench_json_and_plot(tmp_path):
    js, png = tmp_path / "b.json", tmp_path / "b.png"
    r = run("bench", "--shapes", "16x32x48,64x64x64", "--min-time", "0.01", "--reps", "2", "--json", str(js), "--plot", str(png))
    assert r.returncode == 0, r.stderr
    assert "numpy" in r.stdout and "mmla:fast" in r.stdout and "mmla/numpy" in r.stdout
    data = json.loads(js.read_text())
    assert [(x["m"], x["n"], x["k"]) for x in data["results"]] == [(16, 32, 48), (64, 64, 64)]
    libs = data["results"][0]["libs"]
    assert libs["mmla"]["gflops"] > 0 and libs["mmla"]["max_rel_err"] < 1e-5
    assert libs["mmla:bf16"]["max_rel_err"] < 2e-2  # bf16 rounding of the inputs, 2^-8 twice
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bench_rejects_bad_shapes():
    r = run("bench", "--shapes", "16x32")
    assert r.returncode != 0 and "is not MxNxK" in r.stderr
