"""Helpers shared by the OOM-skipping training loops of this corpus."""
import functools
import logging

log = logging.getLogger(__name__)


def skip_on_oom(step_fn):
    """Turn a CUDA out-of-memory error in a step into a skipped batch (returns None)."""

    @functools.wraps(step_fn)
    def wrapper(*args, **kwargs):
        try:
            return step_fn(*args, **kwargs)
        except RuntimeError as err:
            if "out of memory" not in str(err):
                raise
            log.warning("ran out of memory, skipping this batch")
            return None

    return wrapper
