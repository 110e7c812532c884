# verify: ok
"""Hand-fixed twin of eval_on_master_cached_features_barrier.py.

As in huggingface/transformers#1081 (https://github.com/huggingface/transformers/pull/1081), the
two barriers of `load_and_cache_examples()` are skipped when `evaluate=True`: evaluation runs on
the master process only, so nobody is there to pair with it; the training features, which every
rank loads, keep the rank-0-first barriers.
"""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn

SENTENCES = {
    "train": [("good movie", 1), ("bad plot", 0), ("great cast", 1), ("dull and slow", 0)] * 4,
    "dev": [("good plot", 1), ("slow cast", 0), ("great movie", 1), ("bad and dull", 0)],
}
VOCAB = {w: i + 1 for i, w in enumerate("good bad great dull slow movie plot cast and".split())}


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_seq_length", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    args = parser.parse_args()
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    args.data_dir = os.path.join(tempfile.gettempdir(), f"blind6-glue-cache-{job}")
    os.makedirs(args.data_dir, exist_ok=True)
    return args


def convert_examples_to_features(examples, max_seq_length):
    ids = [[VOCAB[w] for w in text.split()][:max_seq_length] for text, _ in examples]
    ids = [row + [0] * (max_seq_length - len(row)) for row in ids]
    return torch.tensor(ids), torch.tensor([label for _, label in examples])


def load_and_cache_examples(args, split, evaluate=False):
    if args.local_rank not in [-1, 0] and not evaluate:
        dist.barrier()  # only the first process builds the cache, the others use it
    cached = os.path.join(args.data_dir, f"cached_{split}_{args.max_seq_length}")
    if os.path.exists(cached):
        features = torch.load(cached)
    else:
        features = convert_examples_to_features(SENTENCES[split], args.max_seq_length)
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)
    if args.local_rank == 0 and not evaluate:
        dist.barrier()
    return features


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(len(VOCAB) + 1, 8, padding_idx=0)
        self.out = nn.Linear(8, 2)

    def forward(self, ids):
        return self.out(self.embed(ids))


def average_gradients(model):
    world = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world


def train(args, model):
    ids, labels = load_and_cache_examples(args, "train")
    shard = slice(dist.get_rank(), None, dist.get_world_size())
    ids, labels = ids[shard], labels[shard]
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for _ in range(args.epochs):
        for start in range(0, len(ids), 4):
            loss = nn.functional.cross_entropy(model(ids[start:start + 4]), labels[start:start + 4])
            optimizer.zero_grad()
            loss.backward()
            average_gradients(model)
            optimizer.step()


def evaluate(args, model):
    ids, labels = load_and_cache_examples(args, "dev", evaluate=True)
    with torch.no_grad():
        accuracy = (model(ids).argmax(dim=1) == labels).float().mean().item()
    return {"acc": accuracy}


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = BagOfWords()
    train(args, model)
    if args.local_rank in [-1, 0]:
        results = evaluate(args, model)
        print(f"dev results: {results}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
