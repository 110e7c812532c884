"""Averaging helpers for the blind10 programs: tensors are reduced, plain numbers left alone."""
import functools

import torch


@functools.singledispatch
def mean_across(value, accelerator):
    return value  # a plain number: nothing to average


@mean_across.register
def _(value: torch.Tensor, accelerator):
    return accelerator.reduce(value, reduction="mean")
