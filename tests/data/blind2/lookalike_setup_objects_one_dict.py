# verify: ok
"""Like `setup_objects_list_length`: the receivers pass `[None]` while the source holds config,
vocabulary and label map; but the source packs them into one dict, so both lists have one slot.
"""
import torch.distributed as dist


class ExperimentSetup:
    def __init__(self, src: int = 0):
        self.src = src
        self.is_source = dist.get_rank() == src
        self.config = self.vocab = self.labels = None

    def _payload(self):
        if self.is_source:
            return [{
                "config": {"lr": 3e-4, "layers": 4},
                "vocab": {"<pad>": 0, "hello": 1, "world": 2},
                "labels": {"neg": 0, "pos": 1},
            }]
        return [None]

    def share(self):
        payload = self._payload()
        dist.broadcast_object_list(payload, src=self.src)
        bundle = payload[0]
        self.config, self.vocab, self.labels = bundle["config"], bundle["vocab"], bundle["labels"]
        return self


def main():
    dist.init_process_group("gloo")
    setup = ExperimentSetup().share()
    print(f"rank {dist.get_rank()}: {len(setup.vocab)} words, lr {setup.config['lr']}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
