"""Trains two steps, then fails."""

import torch

weight = torch.zeros(4, requires_grad=True)
optimizer = torch.optim.SGD([weight], lr=0.1)
for step in range(5):
    optimizer.zero_grad()
    (weight - 1).pow(2).sum().backward()
    optimizer.step()
    if step == 1:
        raise RuntimeError("deliberate failure after step 2")
