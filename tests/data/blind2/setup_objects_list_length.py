# verify: error
"""Share the run's config, vocabulary and label map from the source rank in one object list.

Modelled on https://github.com/open-mmlab/mmrazor/pull/153 (its `broadcast_object_list` example:
`data = ["foo", 12, {1: 2}]` on rank 0, `data = [None, None, None]` elsewhere) and
https://github.com/Ascend/pytorch/issues/58 ("all processes' lists must have the same length").
Here the receivers' list is built by a method that forgets how many objects the source sends.
"""
import torch.distributed as dist


class ExperimentSetup:
    def __init__(self, src: int = 0):
        self.src = src
        self.is_source = dist.get_rank() == src
        self.config = self.vocab = self.labels = None

    def _load(self):
        self.config = {"lr": 3e-4, "layers": 4}
        self.vocab = {"<pad>": 0, "hello": 1, "world": 2}
        self.labels = {"neg": 0, "pos": 1}

    def _payload(self):
        if self.is_source:
            self._load()
            return [self.config, self.vocab, self.labels]
        return [None]

    def share(self):
        payload = self._payload()
        dist.broadcast_object_list(payload, src=self.src)  # expect: BCL013
        self.config, self.vocab, self.labels = payload
        return self


def main():
    dist.init_process_group("gloo")
    setup = ExperimentSetup().share()
    print(f"rank {dist.get_rank()}: {len(setup.vocab)} words, lr {setup.config['lr']}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
