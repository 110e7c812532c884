# verify: error
"""Modelled on https://github.com/mosaicml/composer/pull/2914 and
https://github.com/argonne-lcf/dlio_benchmark/pull/348: the list of checkpoint shards is shared
with broadcast_object_list, but each rank sizes its list from its own listing of a node-local
download directory, which only the main process filled.
"""
import os
import tempfile

from accelerate import Accelerator
from accelerate.utils import broadcast_object_list


class ShardCache:
    def __init__(self, accelerator, root):
        self.accelerator = accelerator
        # node-local scratch: one directory per process, as on separate machines
        self.local_dir = os.path.join(root, f"node{accelerator.process_index}")
        os.makedirs(self.local_dir, exist_ok=True)

    def download(self, names):
        if self.accelerator.is_main_process:
            for name in names:
                with open(os.path.join(self.local_dir, name), "w") as f:
                    f.write(name)

    def listing(self):
        return sorted(os.listdir(self.local_dir))


def agree_on_shards(cache):
    names = [None] * len(cache.listing())
    if cache.accelerator.is_main_process:
        names[:] = cache.listing()
    broadcast_object_list(names)  # expect: BCL013
    return names


def main():
    accelerator = Accelerator()
    job = f"blind3-shards-{os.getppid()}-{os.environ.get('MASTER_PORT', '0')}"
    cache = ShardCache(accelerator, os.path.join(tempfile.gettempdir(), job))
    cache.download([f"model-{i:05d}.safetensors" for i in range(3)])
    accelerator.wait_for_everyone()
    shards = agree_on_shards(cache)
    print(accelerator.process_index, shards)


if __name__ == "__main__":
    main()
