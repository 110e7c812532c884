"""The benchmarks (see README.md): run.py drives corpus, tools, timing and report."""
