"""Hypothesis strategies for PyTorch-flavoured training scripts that mix what every rule looks for.

Scripts are assembled from statement templates nested in loops, functions, `with` blocks and
guards, so the rules meet their patterns in many contexts: under no_grad or not, inside
per-batch or per-epoch loops, behind periodic guards, through different import aliases.
"""

from __future__ import annotations

from hypothesis import strategies as st

IMPORTS = [
    "import torch\nimport torch.nn as nn\nimport numpy as np\n",
    "import torch as T\nfrom torch import nn\nimport numpy\nnp = numpy\ntorch = T\n",
    "import torch\nfrom torch import nn, optim\nfrom torch.nn import DataParallel as DP\nimport numpy as np\n",
    "from torch import nn\nimport numpy as np\n",
    "import numpy as np\n",
]

SETUP = [
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
    "model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())",
    "model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))",
    "model = nn.DataParallel(model)",
    "model = DP(model)",
    "model = model.to(device)",
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    "criterion = nn.CrossEntropyLoss()",
    "loader = torch.utils.data.DataLoader(dataset, batch_size=32)",
    "val_loader = torch.utils.data.DataLoader(val_set, batch_size=64)",
    "arr = np.zeros((3, 4))",
    "t = torch.tensor(arr)",
    "t = torch.tensor(np.ones(3), dtype=torch.float32)",
    "t = torch.FloatTensor(arr)",
    "scaler = torch.cuda.amp.GradScaler()",
    "torch.autograd.set_detect_anomaly(True)",
    "running_loss = 0.0",
    "total = 0",
]

BODY = [
    "inputs, targets = batch",
    "inputs = inputs.to(device)",
    "outputs = model(inputs)",
    "loss = criterion(outputs, targets)",
    "loss.backward()",
    "optimizer.step()",
    "optimizer.zero_grad()",
    "optimizer.zero_grad(set_to_none=False)",
    "model.zero_grad(set_to_none=False)",
    "running_loss += loss.item()",
    "total += loss",
    "value = loss.cpu().numpy()",
    "print(loss)",
    "print(f'loss {loss}')",
    "acc = (outputs.argmax(1) == targets).float().mean().item()",
    "items = outputs.tolist()",
    "if loss:\n    pass",
    "x = float(loss)",
    "model.eval()",
    "model.train()",
    "preds = model(inputs)",
    "torch.cuda.synchronize()",
    "torch.cuda.empty_cache()",
    "t = torch.tensor(arr[0])",
    "z = torch.zeros(3).cuda()",
    "for p in model.parameters():\n    p.grad.zero_()",
    "for p in model.parameters():\n    if p.grad is not None:\n        p.grad.data.zero_()",
    "pass",
]


def _indent(code: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in code.splitlines())


@st.composite
def block(draw, depth: int = 0) -> str:
    statements = draw(st.lists(st.sampled_from(BODY), min_size=1, max_size=5))
    code = "\n".join(statements)
    if depth >= 2:
        return code
    wrapper = draw(
        st.sampled_from(
            [
                None,
                "for step, batch in enumerate(loader):",
                "for batch in val_loader:",
                "for epoch in range(3):",
                "with torch.no_grad():",
                "with torch.inference_mode():",
                "with torch.enable_grad():",
                "if step % 100 == 0:",
                "while True:",
                "def evaluate(model, val_loader):",
                "def train_one_epoch(model, loader):",
            ]
        )
    )
    if wrapper is None:
        return code
    inner = draw(block(depth + 1))
    return f"{wrapper}\n{_indent(inner + chr(10) + code)}"


@st.composite
def training_script(draw) -> str:
    parts = [draw(st.sampled_from(IMPORTS))]
    parts += draw(st.lists(st.sampled_from(SETUP), max_size=6))
    parts += draw(st.lists(block(), min_size=1, max_size=4))
    decorator = draw(st.sampled_from(["", "@torch.no_grad()\n"]))
    parts.append(f"{decorator}def validate(model, val_loader):\n{_indent(draw(block(1)))}")
    parts.append("if __name__ == '__main__':\n    validate(model, val_loader)")
    return "\n".join(parts) + "\n"
