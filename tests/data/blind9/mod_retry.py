"""A small retry decorator shared by the data-loading scripts (imported, not run on its own)."""
import functools
import time


def retry(times, delay, exceptions):
    """Call the wrapped function again, up to ``times`` attempts, when it raises ``exceptions``."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(times):
                try:
                    return fn(*args, **kwargs)
                except exceptions:
                    if attempt == times - 1:
                        raise
                    time.sleep(delay)

        return wrapper

    return decorate
