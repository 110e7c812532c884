"""Receive buffers for broadcasts, allocated the same way everywhere in the program."""
import torch


def receive_buffer(n: int, device="cpu") -> torch.Tensor:
    return torch.zeros(n, device=device)
