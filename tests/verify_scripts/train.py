"""A tiny regression trained with SGD; run as a script, or imported by train_lr.py."""

import os
import sys

import torch
from torch import nn

STEPS = 6


def train(lr: float) -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    inputs, targets = torch.randn(64, 8), torch.randn(64, 1)
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.5f}")


if __name__ == "__main__":
    # verify must run the script as `python train.py` would.
    assert os.path.basename(__file__) == "train.py" and os.path.isabs(__file__), __file__
    assert sys.path[0] == os.path.dirname(__file__), sys.path[0]
    train(lr=0.1)
