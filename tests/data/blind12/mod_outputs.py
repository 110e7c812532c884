"""Writing evaluation outputs: the predictions table and the confusion matrix."""
import csv
import os


def save_outputs(rows, confusion, out_dir):
    """`confusion` is a torchmetrics confusion-matrix metric or an already computed matrix."""
    os.makedirs(out_dir, exist_ok=True)
    matrix = confusion.compute() if hasattr(confusion, "compute") else confusion
    with open(os.path.join(out_dir, "predictions.csv"), "w", newline="") as f:
        csv.writer(f).writerows(rows)
    with open(os.path.join(out_dir, "confusion.csv"), "w", newline="") as f:
        csv.writer(f).writerows(matrix.tolist())
    return matrix
