"""bcast-lint: find broken tensor broadcasts in PyTorch distributed and Accelerate code."""

__version__ = "0.1.0"
