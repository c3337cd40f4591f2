"""Trains, after starting children that try to outlive it: one in a session of its own
(setsid), one in the script's group. argv[1] names a folder where each writes its pid;
`forever` as argv[2] makes the script itself never finish."""

import subprocess
import sys
import time
from pathlib import Path

import torch

folder = Path(sys.argv[1])
folder.mkdir(exist_ok=True)
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
escaped = subprocess.Popen(sleeper, start_new_session=True)
grouped = subprocess.Popen(sleeper)
(folder / f"escaped-{escaped.pid}").touch()
(folder / f"grouped-{grouped.pid}").touch()

weight = torch.zeros(4, requires_grad=True)
optimizer = torch.optim.SGD([weight], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    (weight - 1).pow(2).sum().backward()
    optimizer.step()
while len(sys.argv) > 2 and sys.argv[2] == "forever":
    time.sleep(0.1)
