"""Trains on numpy arrays converted with `torch.tensor` every step: TL003's pattern."""

import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
features = rng.standard_normal((64, 8), dtype=np.float32)
targets = rng.standard_normal((64, 1), dtype=np.float32)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(4):
    inputs = torch.tensor(features)
    labels = torch.tensor(targets)
    loss = nn.functional.mse_loss(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
