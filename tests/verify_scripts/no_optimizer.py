"""Runs a model forward and never trains it."""

import torch
from torch import nn

model = nn.Linear(4, 2)
with torch.no_grad():
    print(model(torch.randn(3, 4)).sum().item())
