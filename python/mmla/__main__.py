"""The `mmla` command: `mmla info`, `mmla bench` (also `python -m mmla ...`)."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mmla", description="mmla: fast GEMM for inference on CPUs")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="CPU, features, caches, kernels per family, threads, fp-math mode")
    bench = sub.add_parser("bench", help="GFLOPS and accuracy beside NumPy (and PyTorch if installed)")
    from . import _bench

    _bench.add_arguments(bench)
    args = parser.parse_args(argv)
    if args.command == "info":
        import mmla

        print(mmla.config(), end="")
        print(f"threads per call: {mmla.get_num_threads()}")
        return 0
    return _bench.run(args)


if __name__ == "__main__":
    sys.exit(main())
