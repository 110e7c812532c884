"""Staging of compressed inputs into a scratch directory, and its cleanup."""
import gzip
import shutil
from pathlib import Path


def stage(files, scratch):
    """Unpack the .gz files among `files` into `scratch`; return the paths to read and whether any was unpacked."""
    staged, unpacked = [], False
    for path in files:
        if path.suffix == ".gz":
            target = scratch / path.stem
            target.write_bytes(gzip.decompress(path.read_bytes()))
            staged.append(target)
            unpacked = True
        else:
            staged.append(path)
    return staged, unpacked


def cleanup_scratch(accelerator, scratch):
    """Remove the scratch directory once every process is done reading from it."""
    accelerator.wait_for_everyone()
    shutil.rmtree(scratch, ignore_errors=True)
